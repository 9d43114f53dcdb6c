import { BACKOFF_TYPES, BackoffType, RETRY_LIMITS } from '@herald/core';
import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

/** backoff_value's range depends on backoff_type: a factor for multiplier, seconds otherwise. */
export function IsBackoffValueForType(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isBackoffValueForType',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          const type = (args.object as { backoff_type?: unknown }).backoff_type;
          // An unknown backoff_type is reported on its own field; do not pile on here.
          if (!isBackoffType(type)) return true;
          const { min, max } = RETRY_LIMITS.backoffValue[type];
          return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
        },
        defaultMessage(args: ValidationArguments) {
          const type = (args.object as { backoff_type: BackoffType }).backoff_type;
          const { min, max } = RETRY_LIMITS.backoffValue[type];
          return `backoff_value must be an integer from ${min} to ${max} when backoff_type is "${type}"`;
        },
      },
    });
}

function isBackoffType(value: unknown): value is BackoffType {
  return (BACKOFF_TYPES as readonly unknown[]).includes(value);
}
