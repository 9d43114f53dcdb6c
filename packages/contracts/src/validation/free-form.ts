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

const FREE_FORM_ITEMS = Symbol('herald:free-form-items');

/**
 * Marks an array of nested DTOs (`items` is their class) that have @FreeForm fields of their own
 * (a batch of events, each with its payload): the validation pipe keeps those fields of every
 * item exactly as received too, as it does for a top-level @FreeForm field.
 */
export function EachWithFreeForm(items: () => new (...args: never[]) => unknown): PropertyDecorator {
  return (target, propertyName) => {
    const fields = new Map(freeFormItemsOf(target.constructor));
    fields.set(String(propertyName), items);
    Reflect.defineMetadata(FREE_FORM_ITEMS, fields, target.constructor);
  };
}

/** The fields of `dtoClass` marked with EachWithFreeForm, with the class of their items. */
export function freeFormItemsOf(dtoClass: unknown): ReadonlyMap<string, () => unknown> {
  return (
    (typeof dtoClass === 'function' && (Reflect.getMetadata(FREE_FORM_ITEMS, dtoClass) as Map<string, () => unknown> | undefined)) ||
    new Map()
  );
}
