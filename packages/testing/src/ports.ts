import net from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Polls a URL until it answers 200 or the deadline passes. `givenUp` is asked before each try:
 * a process under test that has already exited is a failure now, not after the timeout; its
 * message (the process's output, say) ends the error.
 */
export async function waitForOk(url: string, timeoutMs: number, givenUp?: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const reason = givenUp?.();
    if (reason !== null && reason !== undefined) throw new Error(`gave up waiting for ${url}: ${reason}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}
