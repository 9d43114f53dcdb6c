import { AppError, ErrorResponse } from '@herald/contracts';

/** The body of every non-2xx response (PRODUCT.md §2). */
export function errorEnvelope(error: AppError, requestId: string): ErrorResponse {
  return {
    success: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details && error.details.length > 0 ? { details: error.details } : {}),
    },
    request_id: requestId,
  };
}
