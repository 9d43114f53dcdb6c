import { registerDecorator, ValidationOptions } from 'class-validator';
import { ErrorDetail } from '../errors/app-error';
import { coded } from './coded-constraint';

export const MAX_CUSTOM_HEADERS = 20;
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 4096;

/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What HTTP lets a field value carry (RFC 9110 field-vchar, SP, HTAB, obs-text); undici refuses the rest when sending. */
const FORBIDDEN_VALUE_CHARACTERS = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Names Herald sets itself or that would break HTTP framing if a customer could set them.
 * `webhook-*` protects the Standard Webhooks signature headers.
 */
const RESERVED_NAMES = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);
const RESERVED_PREFIXES = ['proxy-', 'webhook-'];

export function isReservedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_NAMES.has(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** One detail per problem, each naming the header (`headers.X-Token`). Empty when all is well. */
export function describeHeaderProblems(value: unknown, field = 'headers'): ErrorDetail[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field, message: 'headers must be an object mapping header names to string values' }];
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const problems: ErrorDetail[] = [];
  if (entries.length > MAX_CUSTOM_HEADERS) {
    problems.push({ field, message: `at most ${MAX_CUSTOM_HEADERS} headers are allowed, got ${entries.length}` });
  }
  const seen = new Set<string>();
  for (const [name, headerValue] of entries) {
    const at = `${field}.${name}`;
    if (name.length === 0 || name.length > MAX_HEADER_NAME_LENGTH) {
      problems.push({ field: at, message: `header names must be 1 to ${MAX_HEADER_NAME_LENGTH} characters` });
    } else if (!HEADER_NAME.test(name)) {
      problems.push({ field: at, message: 'header name may only contain HTTP token characters' });
    } else if (isReservedHeaderName(name)) {
      problems.push({ field: at, message: `"${name}" is reserved and cannot be set` });
    } else if (seen.has(name.toLowerCase())) {
      problems.push({ field: at, message: `"${name}" is given more than once (names are case-insensitive)` });
    }
    seen.add(name.toLowerCase());
    if (typeof headerValue !== 'string') {
      problems.push({ field: at, message: 'header values must be strings' });
    } else if (headerValue.length > MAX_HEADER_VALUE_LENGTH) {
      problems.push({ field: at, message: `header values must be at most ${MAX_HEADER_VALUE_LENGTH} characters` });
    } else if (FORBIDDEN_VALUE_CHARACTERS.test(headerValue)) {
      problems.push({
        field: at,
        message: 'header values must not contain CR, LF, NUL or other control characters, or characters beyond Latin-1',
      });
    }
  }
  return problems;
}

export function IsWebhookHeaders(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isWebhookHeaders',
      target: target.constructor,
      propertyName: propertyName as string,
      options: coded({ errorKind: 'HEADER_NOT_ALLOWED', expandDetails: describeHeaderProblems }, options),
      validator: {
        validate: (value: unknown) => describeHeaderProblems(value).length === 0,
        defaultMessage: () => 'headers are not allowed',
      },
    });
}
