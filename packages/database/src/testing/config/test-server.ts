/** The PostgreSQL server tests use (trust auth on 127.0.0.1 on the development and CI machines). */
export function testServerUrl(): string {
  return process.env.HERALD_TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

/** This run's migrated template, set by the jest global setup for every test file. */
export function testTemplateDatabase(): string {
  const template = process.env.HERALD_TEST_TEMPLATE;
  if (!template) throw new Error('HERALD_TEST_TEMPLATE is not set: run these specs through jest (jestGlobalSetup)');
  return template;
}

export function setTestTemplateDatabase(name: string): void {
  process.env.HERALD_TEST_TEMPLATE = name;
}
