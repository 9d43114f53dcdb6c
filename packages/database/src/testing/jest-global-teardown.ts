import { testServerUrl, testTemplateDatabase } from './config/test-server';
import { dropTestDatabases } from './test-databases';

/** jest globalTeardown (jest.database.preset.js): drops the template and any clone a test file left behind. */
export default async function jestGlobalTeardown(): Promise<void> {
  await dropTestDatabases(testServerUrl(), testTemplateDatabase());
}
