import pg from 'pg';
import { testServerUrl } from '../testing/config/test-server';
import { ChannelListener } from './channel-listener';

/** Against the real server: a LISTEN connection is what must not outlive stop(). */
describe('ChannelListener', () => {
  const listeners = async (channel: string): Promise<number> => {
    const client = new pg.Client({ connectionString: testServerUrl() });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE query = $1', [
        `LISTEN ${channel}`,
      ]);
      return Number(rows[0].n);
    } finally {
      await client.end();
    }
  };

  it('listens after start and lets go after stop', async () => {
    const channel = `herald_spec_${process.pid}_a`;
    const listener = new ChannelListener(testServerUrl(), channel, { onNotification: () => undefined });
    await listener.start();
    expect(await listeners(channel)).toBe(1);
    await listener.stop();
    expect(await listeners(channel)).toBe(0);
  });

  it('closes a connection still being made when stop() comes first (a SIGTERM right after start-up)', async () => {
    const channel = `herald_spec_${process.pid}_b`;
    for (let round = 0; round < 5; round++) {
      const listener = new ChannelListener(testServerUrl(), channel, { onNotification: () => undefined });
      const starting = listener.start();
      await listener.stop();
      await starting;
      expect(await listeners(channel)).toBe(0);
    }
  });
});
