import { ValidationOptions } from 'class-validator';
import { ErrorDetail } from '../errors/app-error';
import { ErrorKind } from '../errors/error-catalogue';

/**
 * Context attached to a class-validator constraint. By default a failed constraint is a
 * 400-02; a constraint may name a more specific catalogue entry (an unsafe URL is a 400-05)
 * and may expand its one failure into one detail per offending item (each bad header).
 */
export interface CodedConstraintContext {
  errorKind: ErrorKind;
  expandDetails?: (value: unknown, field: string) => ErrorDetail[];
}

export function coded(context: CodedConstraintContext, options: ValidationOptions = {}): ValidationOptions {
  return { ...options, context };
}
