#!/usr/bin/env node
import { parseApiClientConfig, parseHeraldConfig } from '@herald/core';
import { runHerald } from './program';

// The one place the cli reads the environment; the config module says what each command needs of it.
// `herald deliveries list | head`: a reader that stops early is no error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}

runHerald(process.argv.slice(2), {
  config: () => parseHeraldConfig(process.env),
  apiDefaults: () => parseApiClientConfig(process.env),
  env: process.env,
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
