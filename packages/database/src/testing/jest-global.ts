import { setTestTemplateDatabase, testServerUrl, testTemplateDatabase } from './config/test-server';
import { assertServerReachable, createTemplateDatabase, dropTestDatabases } from './test-databases';

/** jest globalSetup: one migrated template database per run, shared by every test file. */
export async function jestGlobalSetup(): Promise<void> {
  await assertServerReachable(testServerUrl());
  setTestTemplateDatabase(await createTemplateDatabase(testServerUrl()));
}

/** jest globalTeardown: drops the template and any clone a test file left behind. */
export async function jestGlobalTeardown(): Promise<void> {
  await dropTestDatabases(testServerUrl(), testTemplateDatabase());
}
