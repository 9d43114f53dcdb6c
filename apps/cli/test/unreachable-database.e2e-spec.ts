import { databaseUrl, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { freePort, runCli } from './support/run-cli';

// An operator pointing the cli at the wrong database gets one line naming the server and the
// problem, never a stack, never the password in the connection string.

const missingDatabase = () => `${testTemplateDatabase()}_missing`;
const serverAddress = () => {
  const server = new URL(testServerUrl());
  return `${server.hostname}:${server.port || 5432}`;
};
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the cli against a database it cannot use', () => {
  it.each([[['migrate']], [['migrate', '--check']], [['start']]])('herald %j: a database that does not exist', async (args) => {
    const name = missingDatabase();
    const result = await runCli(args, { DATABASE_URL: databaseUrl(testServerUrl(), name), PORT: String(await freePort()) });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      `herald: Cannot connect to the database at ${serverAddress()}/${name} (DATABASE_URL): database "${name}" does not exist`,
    ]);
    expect(result.stdout).toBe('');
  });

  it.each([[['migrate']], [['migrate', '--check']], [['start']]])('herald %j: a server that is not there', async (args) => {
    const port = await freePort(); // nothing listens on it
    const result = await runCli(args, {
      DATABASE_URL: `postgresql://herald:s3cret-pw@127.0.0.1:${port}/herald`,
      PORT: String(await freePort()),
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^herald: Cannot connect to the database at 127\\.0\\.0\\.1:${port}/herald \\(DATABASE_URL\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`,
        ),
      ),
    ]);
    expect(result.stderr).not.toContain('s3cret-pw');
  });

  it('herald migration new: a server that is not there', async () => {
    const port = await freePort();
    const result = await runCli(['migration', 'new', 'nothing'], { DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/postgres` });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(
      new RegExp(
        `^herald: Cannot connect to the database at ${escape(`127.0.0.1:${port}/postgres`)} \\(DATABASE_URL\\): connect ECONNREFUSED`,
      ),
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
