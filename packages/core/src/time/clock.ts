/** Injected wherever behaviour depends on the time, so schedules are tested exactly. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
