import { HeraldConfig, parseHeraldConfig } from '@herald/core';

/** The one place the worker reads the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): HeraldConfig {
  return parseHeraldConfig(env);
}
