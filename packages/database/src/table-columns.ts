/**
 * A table's columns under the names its record uses (Prisma's field names), written once per
 * table. The Prisma `select` and the SQL column list are both made from it, and the SQL aliases
 * each column to its field name, so a row reads the same whichever way it was fetched.
 */
export type TableColumns = Readonly<Record<string, string>>;

/** The Prisma `select` of every column. */
export function prismaSelectOf<C extends TableColumns>(columns: C): { readonly [K in keyof C]: true } {
  return Object.fromEntries(Object.keys(columns).map((field) => [field, true])) as { readonly [K in keyof C]: true };
}

/** `t.column AS "field", …` for a SELECT or RETURNING list; `table` is the table's name or alias there. */
export function sqlColumnsOf(columns: TableColumns, table: string): string {
  return Object.entries(columns)
    .map(([field, column]) => `${table}.${column} AS "${field}"`)
    .join(', ');
}
