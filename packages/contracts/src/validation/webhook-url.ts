import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { coded } from './coded-constraint';

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/**
 * The checks a URL can pass or fail on its own. Whether an IP-literal host is public depends on
 * the operator's allow-list, so the service checks that; names are checked again at every
 * connection, because DNS answers change.
 */
export function describeUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'url must be a string';
  if (value.length === 0) return 'url must not be empty';
  if (value.length > WEBHOOK_URL_MAX_LENGTH) return `url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
  if (value !== value.trim()) return 'url must not start or end with white space';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute URL such as https://example.com/hooks';
  }
  // The URL parser silently drops tabs and line breaks; a URL that needs them is not one we store.
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(value)) return 'url must not contain spaces or control characters (percent-encode them)';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https';
  if (url.hostname === '') return 'url must name a host';
  if (url.username !== '' || url.password !== '') {
    return 'url must not contain credentials; send them in a custom header instead';
  }
  return null;
}

export function IsWebhookUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isWebhookUrl',
      target: target.constructor,
      propertyName: propertyName as string,
      options: coded({ errorKind: 'URL_NOT_ALLOWED' }, options),
      validator: {
        validate: (value: unknown) => describeUrlProblem(value) === null,
        defaultMessage: (args: ValidationArguments) => describeUrlProblem(args.value) ?? 'url is not allowed',
      },
    });
}
