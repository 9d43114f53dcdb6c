import { setTestTemplateDatabase, testServerUrl } from './config/test-server';
import { assertServerReachable, createTemplateDatabase } from './test-databases';

/** jest globalSetup (jest.database.preset.js): one migrated template database per run, shared by every test file. */
export default async function jestGlobalSetup(): Promise<void> {
  await assertServerReachable(testServerUrl());
  setTestTemplateDatabase(await createTemplateDatabase(testServerUrl()));
}
