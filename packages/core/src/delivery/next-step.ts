import { delayBeforeRetry, honourRetryAfter, RetryPolicy } from '../retry/retry-policy';
import { AttemptResult, isSuccess, NEVER_REACHED_RECEIVER } from './attempt-result';

export interface AttemptContext {
  result: AttemptResult;
  /** 1 for the first attempt; attempt n + 1 is retry n. */
  attemptNumber: number;
  retryEnabled: boolean;
  ensureDelivery: boolean;
  policy: RetryPolicy;
  /** A hand-made retry of a finished delivery: one attempt, no automatic follow-ups. */
  manualAttempt: boolean;
  now: Date;
}

export type NextStep =
  { status: 'succeeded' } | { status: 'failed'; reason: FailureReason } | { status: 'pending'; nextAttemptAt: Date; delaySeconds: number };

export type FailureReason =
  'destination_blocked' | 'gone' | 'manual_attempt' | 'retries_disabled' | 'retries_exhausted' | 'not_retryable_at_most_once';

/**
 * What follows an attempt (PRODUCT.md §5.2). With ensure_delivery every failure is retried per
 * the policy (at least once); without it only failures that surely never reached the receiver
 * are (at most once). A 2xx succeeds; 410 Gone and a blocked destination are final; a
 * Retry-After on 429 or 503 can lengthen (never shorten) the wait.
 */
export function nextStep(context: AttemptContext): NextStep {
  const { result, attemptNumber, policy } = context;
  if (isSuccess(result)) return { status: 'succeeded' };
  if (result.error === 'destination_blocked') return { status: 'failed', reason: 'destination_blocked' };
  if (result.status === 410) return { status: 'failed', reason: 'gone' };
  if (context.manualAttempt) return { status: 'failed', reason: 'manual_attempt' };
  if (!context.retryEnabled) return { status: 'failed', reason: 'retries_disabled' };
  if (attemptNumber > policy.maxRetries) return { status: 'failed', reason: 'retries_exhausted' };
  const neverReached = result.error !== null && NEVER_REACHED_RECEIVER.has(result.error);
  if (!context.ensureDelivery && !neverReached) return { status: 'failed', reason: 'not_retryable_at_most_once' };

  const scheduled = delayBeforeRetry(policy, attemptNumber);
  const askedToWait = result.status === 429 || result.status === 503;
  const delaySeconds = askedToWait ? honourRetryAfter(scheduled, result.retryAfterSeconds) : scheduled;
  return { status: 'pending', delaySeconds, nextAttemptAt: new Date(context.now.getTime() + delaySeconds * 1000) };
}
