import { AppError } from './app-error';
import { quoteInput } from './quote-input';

/**
 * Errors raised in more than one place, built here once so their wording and details stay
 * the same wherever they come from. The rule: services raise precondition errors (a webhook
 * must exist), repositories translate constraint violations (an event type the foreign key
 * does not know) into these.
 */
export const Errors = {
  webhookNotConfigured(applicationId: number): AppError {
    return new AppError('WEBHOOK_NOT_CONFIGURED', `Application ${applicationId} has no webhook configured.`);
  },

  /** `field` names where the name came from: `event` in a body, `subscription` in a path. */
  unknownEventType(name: string, field: string): AppError {
    return new AppError('UNKNOWN_EVENT_TYPE', `${quoteInput(name)} is not an event type; GET /event_types lists them.`, {
      details: [{ field, message: `unknown event type ${quoteInput(name)}` }],
    });
  },
};
