/** Which Herald process is running: the `service` field of its log lines, and its name in start-up errors. */
export type HeraldService = 'herald-api' | 'herald-worker';
