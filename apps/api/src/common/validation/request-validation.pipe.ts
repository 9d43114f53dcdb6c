import { AppError, CodedConstraintContext, ErrorDetail, ErrorKind, freeFormFieldsOf, freeFormItemsOf } from '@herald/contracts';
import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';

const NOT_VALIDATED: unknown[] = [String, Boolean, Number, Array, Object];

/** C0 controls and DEL: never part of a name, an id, a URL or a query value Herald stores. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
/**
 * Every name Object.prototype carries (toString, hasOwnProperty, valueOf, __proto__, constructor…)
 * and `prototype`. No DTO of Herald's has such a field, and the validator cannot be trusted to
 * call one unknown: an instance inherits them all, so `{"toString": 1}` passed the whitelist and
 * was silently dropped (PRODUCT.md §17). Refused by name instead, wherever they appear.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/**
 * Validates bodies and query strings against their DTO classes. Nothing is coerced: `1` is not
 * `true`, `"5"` is not `5`. Unknown fields are refused. Each failing field becomes one detail;
 * the error's code is the one its constraints name (400-05 for an unsafe URL, 400-06 for bad
 * headers, 400-03 for query parameters) or 400-02 when they disagree. Strings may not carry
 * control characters, except inside the client's own maps (@FreeForm: payloads, headers),
 * which are handed to the DTO exactly as parsed.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const { metatype, type } = metadata;
    if (!metatype || NOT_VALIDATED.includes(metatype) || (type !== 'body' && type !== 'query')) return value;
    if (type === 'body' && !isJsonObject(value)) {
      throw new AppError(
        'BODY_NOT_JSON',
        value === undefined ? 'The request has no body; send a JSON object.' : 'The request body must be a JSON object.',
      );
    }
    const fallback: ErrorKind = type === 'body' ? 'VALIDATION_FAILED' : 'INVALID_PARAMETER';
    const raw = (value ?? {}) as Record<string, unknown>;
    const { structured, restore } = separateFreeForm(metatype, raw);
    // class-transformer cannot take these either: it assigns `__proto__` as the prototype and
    // reads `constructor` to pick a class (a string there throws).
    const prototypeKeys = findKeys(structured, PROTOTYPE_KEYS);
    if (prototypeKeys.length > 0) {
      throw detailed(
        fallback,
        prototypeKeys.map((field) => ({ field, message: `${field} is not a known field` })),
      );
    }

    const instance = plainToInstance(metatype, structured, { enableImplicitConversion: false }) as Record<string, unknown>;
    restore(instance);
    // Synchronous: no constraint of Herald's is asynchronous, and validate() would build a promise
    // for every constraint of every field (~a quarter of the validation's cost, bench/README.md).
    const errors = validateSync(instance, {
      whitelist: true,
      forbidNonWhitelisted: true,
      stopAtFirstError: true,
      forbidUnknownValues: true,
    });
    if (errors.length > 0) throw validationFailure(errors, fallback);

    const controlled = findStrings(structured, (text) => CONTROL_CHARACTER.test(text));
    if (controlled.length > 0) {
      throw detailed(
        fallback,
        controlled.map((field) => ({ field, message: `${field} must not contain control characters` })),
      );
    }
    return instance;
  }
}

/**
 * Splits a body into what class-transformer may see and the client's own maps (@FreeForm fields,
 * also inside the items of an @EachWithFreeForm array), which `restore` puts back on the
 * validated instance exactly as parsed.
 */
function separateFreeForm(
  dtoClass: unknown,
  raw: Record<string, unknown>,
): { structured: Record<string, unknown>; restore: (instance: Record<string, unknown>) => void } {
  const freeForm = freeFormFieldsOf(dtoClass);
  const itemClasses = freeFormItemsOf(dtoClass);
  const structured: Record<string, unknown> = {};
  const restores: ((instance: Record<string, unknown>) => void)[] = [];
  for (const key of Object.keys(raw)) {
    if (freeForm.includes(key)) {
      restores.push((instance) => (instance[key] = raw[key]));
      continue;
    }
    let value = raw[key];
    const itemClass = itemClasses.get(key);
    if (itemClass && Array.isArray(value)) {
      const items = value.map((item) => (isJsonObject(item) ? separateFreeForm(itemClass(), item) : null));
      value = value.map((item, i) => items[i]?.structured ?? item);
      restores.push((instance) => {
        const list = instance[key];
        if (Array.isArray(list)) items.forEach((item, i) => item && isJsonObject(list[i]) && item.restore(list[i]));
      });
    }
    // defineProperty: a `__proto__` key stays a plain field here, to be refused below by name.
    Object.defineProperty(structured, key, { value, enumerable: true, writable: true });
  }
  return { structured, restore: (instance) => restores.forEach((put) => put(instance)) };
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An answer stays small whatever was sent: at most this many details, each field name cut short. */
const MAX_DETAILS = 20;
const MAX_FIELD_LENGTH = 300;

function detailed(kind: ErrorKind, details: ErrorDetail[]): AppError {
  const shown = details
    .slice(0, MAX_DETAILS)
    .map(({ field, message }) =>
      field.length > MAX_FIELD_LENGTH
        ? { field: `${field.slice(0, MAX_FIELD_LENGTH)}…`, message: message.split(field).join(`${field.slice(0, MAX_FIELD_LENGTH)}…`) }
        : { field, message },
    );
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new AppError(kind, `${shown[0].message}${more}.`, { details: shown });
}

/** Paths (a.b[2].c) of every object key among `names`. */
function findKeys(value: unknown, names: ReadonlySet<string>, path = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (!Array.isArray(value) && names.has(key)) found.push(at);
    found.push(...findKeys(child, names, at));
  }
  return found;
}

/** Paths of every string value that matches. */
function findStrings(value: unknown, matches: (text: string) => boolean, path = ''): string[] {
  if (typeof value === 'string') return matches(value) ? [path] : [];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    findStrings(child, matches, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key),
  );
}

function validationFailure(errors: ValidationError[], fallback: ErrorKind): AppError {
  const failures = errors.flatMap((error) => collect(error, ''));
  const details = failures.flatMap((failure) => failure.details);
  const kinds = new Set(failures.map((failure) => failure.kind ?? fallback));
  return detailed(kinds.size === 1 ? [...kinds][0] : fallback, details);
}

interface Failure {
  kind: ErrorKind | null;
  details: ErrorDetail[];
}

function collect(error: ValidationError, prefix: string): Failure[] {
  // An array's items are numbered properties; they read as events[7].event.
  const field = !prefix ? error.property : /^\d+$/.test(error.property) ? `${prefix}[${error.property}]` : `${prefix}.${error.property}`;
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
