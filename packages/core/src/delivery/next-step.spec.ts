import { RetryPolicy } from '../retry/retry-policy';
import { AttemptError, AttemptResult } from './attempt-result';
import { AttemptContext, nextStep } from './next-step';

const NOW = new Date('2026-11-21T12:00:00.000Z');
const POLICY: RetryPolicy = { retryValue: 30, maxRetries: 3, backoffType: 'multiplier', backoffValue: 2 };

const answered = (status: number, retryAfterSeconds: number | null = null): AttemptResult => ({
  status,
  excerpt: '',
  error: null,
  retryAfterSeconds,
  durationMs: 5,
});
const failedWith = (error: AttemptError): AttemptResult => ({ status: null, excerpt: null, error, retryAfterSeconds: null, durationMs: 5 });

const context = (overrides: Partial<AttemptContext>): AttemptContext => ({
  result: answered(500),
  attemptNumber: 1,
  retryEnabled: true,
  ensureDelivery: true,
  policy: POLICY,
  manualAttempt: false,
  now: NOW,
  ...overrides,
});
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

describe('nextStep: the delivery semantics table (PRODUCT.md §5.2)', () => {
  const answers: [string, AttemptResult][] = [
    ['500', answered(500)],
    ['404', answered(404)],
    ['302 (redirects are failures)', answered(302)],
    ['timeout', failedWith('timeout')],
    ['network error after sending', failedWith('network_error')],
  ];
  const neverReached: [string, AttemptResult][] = [
    ['DNS failure', failedWith('dns_error')],
    ['connection refused', failedWith('connection_refused')],
    ['connect timeout', failedWith('connect_timeout')],
    ['TLS handshake', failedWith('tls_error')],
  ];

  describe('ensure_delivery = true, retry_enabled = 1: every failure is retried per the policy', () => {
    it.each([...answers, ...neverReached])('%s → retry after 30 s', (_, result) => {
      expect(nextStep(context({ result }))).toEqual({ status: 'pending', delaySeconds: 30, nextAttemptAt: at(30) });
    });
  });

  describe('ensure_delivery = false, retry_enabled = 1: only what surely never reached the receiver is retried', () => {
    it.each(neverReached)('%s → retry after 30 s', (_, result) => {
      expect(nextStep(context({ result, ensureDelivery: false }))).toEqual({ status: 'pending', delaySeconds: 30, nextAttemptAt: at(30) });
    });
    it.each(answers)('%s → final', (_, result) => {
      expect(nextStep(context({ result, ensureDelivery: false }))).toEqual({ status: 'failed', reason: 'not_retryable_at_most_once' });
    });
  });

  describe.each([true, false])('ensure_delivery = %p, retry_enabled = 0: one attempt', (ensureDelivery) => {
    it.each([...answers, ...neverReached])('%s → final', (_, result) => {
      expect(nextStep(context({ result, ensureDelivery, retryEnabled: false }))).toEqual({ status: 'failed', reason: 'retries_disabled' });
    });
  });

  it.each([200, 201, 204, 299])('%d succeeds', (status) => {
    expect(nextStep(context({ result: answered(status) }))).toEqual({ status: 'succeeded' });
    expect(nextStep(context({ result: answered(status), retryEnabled: false, ensureDelivery: false }))).toEqual({ status: 'succeeded' });
  });

  it('410 Gone is final even with retries and ensure_delivery', () => {
    expect(nextStep(context({ result: answered(410) }))).toEqual({ status: 'failed', reason: 'gone' });
  });

  it('a blocked destination is final', () => {
    expect(nextStep(context({ result: failedWith('destination_blocked') }))).toEqual({ status: 'failed', reason: 'destination_blocked' });
  });

  it('follows the stored schedule and stops after max_retries retries', () => {
    expect([1, 2, 3].map((attemptNumber) => nextStep(context({ attemptNumber })))).toEqual([
      { status: 'pending', delaySeconds: 30, nextAttemptAt: at(30) },
      { status: 'pending', delaySeconds: 60, nextAttemptAt: at(60) },
      { status: 'pending', delaySeconds: 120, nextAttemptAt: at(120) },
    ]);
    expect(nextStep(context({ attemptNumber: 4 }))).toEqual({ status: 'failed', reason: 'retries_exhausted' });
    expect(nextStep(context({ policy: { ...POLICY, maxRetries: 0 } }))).toEqual({ status: 'failed', reason: 'retries_exhausted' });
  });

  it.each([
    [{ backoffType: 'linear', retryValue: 10, backoffValue: 5 } as const, [10, 15, 20]],
    [{ backoffType: 'fixed', retryValue: 7, backoffValue: 0 } as const, [7, 7, 7]],
  ])('uses the %j policy', (shape, delays) => {
    const policy = { ...shape, maxRetries: 3 };
    expect(
      [1, 2, 3].map((attemptNumber) => (nextStep(context({ attemptNumber, policy })) as { delaySeconds: number }).delaySeconds),
    ).toEqual(delays);
  });

  it.each([
    [429, 300, 300],
    [503, 300, 300],
    [429, 5, 30],
    [503, null, 30],
    [500, 300, 30],
    [429, 10 * 86_400, 86_400],
  ])('status %d with Retry-After %p waits %d s', (status, retryAfter, expected) => {
    const step = nextStep(context({ result: answered(status, retryAfter) }));
    expect(step).toEqual({ status: 'pending', delaySeconds: expected, nextAttemptAt: at(expected) });
  });

  it('a manual retry gets no automatic follow-up', () => {
    expect(nextStep(context({ manualAttempt: true }))).toEqual({ status: 'failed', reason: 'manual_attempt' });
    expect(nextStep(context({ manualAttempt: true, result: answered(200) }))).toEqual({ status: 'succeeded' });
  });
});
