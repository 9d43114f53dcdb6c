import 'reflect-metadata';

const FREE_FORM_FIELDS = Symbol('herald:free-form-fields');

/**
 * Marks a property whose value is the client's own JSON map (a payload, the custom headers):
 * kept exactly as received, whatever its keys (`__proto__`, `constructor`, `toString` are
 * ordinary names there), never run through class-transformer, whose assignments would turn
 * such keys into prototypes or drop them. Its own validators still run on the raw value.
 * Control characters are the field's own business too (a payload may carry any JSON string).
 */
export function FreeForm(): PropertyDecorator {
  return (target, propertyName) => {
    const fields: string[] = Reflect.getOwnMetadata(FREE_FORM_FIELDS, target.constructor) ?? [
      ...freeFormFieldsOf(Object.getPrototypeOf(target.constructor)),
    ];
    Reflect.defineMetadata(FREE_FORM_FIELDS, [...fields, String(propertyName)], target.constructor);
  };
}

export function freeFormFieldsOf(dtoClass: unknown): readonly string[] {
  return (typeof dtoClass === 'function' && (Reflect.getMetadata(FREE_FORM_FIELDS, dtoClass) as string[] | undefined)) || [];
}
