import { AppError, CodedConstraintContext, ErrorDetail, ErrorKind } from '@herald/contracts';
import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate, ValidationError } from 'class-validator';

const NOT_VALIDATED: unknown[] = [String, Boolean, Number, Array, Object];

/**
 * Validates bodies and query strings against their DTO classes. Nothing is coerced: `1` is not
 * `true`, `"5"` is not `5`. Unknown fields are refused. Each failing field becomes one detail;
 * the error's code is the one its constraints name (400-05 for an unsafe URL, 400-06 for bad
 * headers, 400-03 for query parameters) or 400-02 when they disagree.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { metatype, type } = metadata;
    if (!metatype || NOT_VALIDATED.includes(metatype) || (type !== 'body' && type !== 'query')) return value;
    if (type === 'body' && !isJsonObject(value)) {
      throw new AppError(
        'BODY_NOT_JSON',
        value === undefined ? 'The request has no body; send a JSON object.' : 'The request body must be a JSON object.',
      );
    }
    const instance = plainToInstance(metatype, value ?? {}, { enableImplicitConversion: false });
    const errors = await validate(instance as object, {
      whitelist: true,
      forbidNonWhitelisted: true,
      stopAtFirstError: true,
      forbidUnknownValues: true,
    });
    if (errors.length > 0) throw validationFailure(errors, type === 'body' ? 'VALIDATION_FAILED' : 'INVALID_PARAMETER');
    return instance;
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface Failure {
  kind: ErrorKind | null;
  details: ErrorDetail[];
}

function validationFailure(errors: ValidationError[], fallback: ErrorKind): AppError {
  const failures = errors.flatMap((error) => collect(error, ''));
  const details = failures.flatMap((failure) => failure.details);
  const kinds = new Set(failures.map((failure) => failure.kind ?? fallback));
  const kind = kinds.size === 1 ? [...kinds][0] : fallback;
  const first = details[0];
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new AppError(kind, `${first.message}${more}.`, { details });
}

function collect(error: ValidationError, prefix: string): Failure[] {
  const field = prefix ? `${prefix}.${error.property}` : error.property;
  const failures: Failure[] = [];
  for (const [constraint, message] of Object.entries(error.constraints ?? {})) {
    const context = error.contexts?.[constraint] as CodedConstraintContext | undefined;
    if (constraint === 'whitelistValidation') {
      failures.push({ kind: null, details: [{ field, message: `${field} is not a known field` }] });
    } else if (context?.expandDetails) {
      failures.push({ kind: context.errorKind, details: context.expandDetails(error.value, field) });
    } else {
      failures.push({ kind: context?.errorKind ?? null, details: [{ field, message: withFullPath(message, error.property, field) }] });
    }
  }
  for (const child of error.children ?? []) failures.push(...collect(child, field));
  return failures;
}

/** class-validator names the bare property; details name the full path (retry_config.max_retries). */
function withFullPath(message: string, property: string, field: string): string {
  return message.startsWith(`${property} `) && field !== property ? `${field}${message.slice(property.length)}` : message;
}
