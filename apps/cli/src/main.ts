#!/usr/bin/env node
import { parseHeraldConfig } from '@herald/core';
import { runHerald } from './program';

// The one place the cli reads the environment. The api commands parse only the two variables
// they use, so an unrelated bad value (say HERALD_LOG_LEVEL) does not stop `herald accounts list`.
// `herald deliveries list | head`: a reader that stops early is no error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}

runHerald(process.argv.slice(2), {
  config: () => parseHeraldConfig(process.env),
  apiDefaults: () => {
    const config = parseHeraldConfig({ PORT: process.env.PORT, HERALD_ADMIN_KEY: process.env.HERALD_ADMIN_KEY });
    return { port: config.http.port, adminKey: config.auth.adminKey };
  },
  env: process.env,
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
