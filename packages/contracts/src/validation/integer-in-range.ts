import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

/**
 * An integer from `min` to `max`, with a message that says which rule failed: a string or a
 * fraction is told it must be an integer (PRODUCT §2), not that it is out of range. One
 * constraint instead of IsInt + Min + Max, whose order under stopAtFirstError is the reverse
 * of the decorators' and so reported "must not be greater than" for "30".
 */
export function IsIntegerInRange(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isIntegerInRange',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      constraints: [min, max],
      validator: {
        validate: (value: unknown) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max,
        defaultMessage: ({ property, value }: ValidationArguments) => {
          if (!Number.isInteger(value)) return `${property} must be an integer (got ${describeType(value)})`;
          return value < min ? `${property} must not be less than ${min}` : `${property} must not be greater than ${max}`;
        },
      },
    });
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isFinite(value) ? `the fraction ${value}` : String(value);
  if (typeof value === 'string') return 'a string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
