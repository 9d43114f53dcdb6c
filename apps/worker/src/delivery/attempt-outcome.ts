/** What became of one claimed delivery when its attempt (or its cancellation) was recorded. */
export const ATTEMPT_OUTCOMES = ['succeeded', 'failed', 'retry_scheduled', 'cancelled', 'paused', 'released', 'lease_lost'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
