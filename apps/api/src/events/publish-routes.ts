import {
  MAX_BATCH_EVENTS,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_ORDERING_KEY_LENGTH,
  PublishEventBatchRequest,
  PublishEventRequest,
} from '@herald/contracts';
import { EVENT_TYPE_NAME_MAX_LENGTH } from '@herald/core';
import Ajv from 'ajv';
import { BodyAcceptor, directRoute } from '../common/http/direct-routes';
import { EventController } from './event.controller';

/**
 * The publish bodies the api takes without asking class-validator (issue 21, item 2): JSON
 * Schemas compiled by ajv, each a strict subset of what its DTO accepts. A body they accept is
 * one the DTO accepts too, and becomes the same instance; anything else — an error to explain,
 * or a valid body they are too strict for, such as a key outside printable ASCII — goes to the
 * DTO's validation (RequestValidationPipe), which answers or accepts it exactly as before. So
 * the rules and their messages stay in one place, the DTO; publish-routes.spec.ts holds the
 * two side by side over generated bodies.
 *
 * Printable ASCII only, for the strings the DTO measures: class-validator counts a string's
 * length without variation selectors and counts a surrogate pair as one (validator.js isLength),
 * and refuses control characters; for printable ASCII all of that is the plain length.
 */
const printable = (max: number) => ({ type: 'string', pattern: `^[\\x20-\\x7e]{1,${max}}$` }) as const;

interface PublishBody {
  event: string;
  payload: Record<string, unknown>;
  idempotency_key?: string;
  ordering_key?: string;
}

const PUBLISH_EVENT_SCHEMA = {
  type: 'object',
  required: ['event', 'payload'],
  additionalProperties: false,
  properties: {
    event: printable(EVENT_TYPE_NAME_MAX_LENGTH),
    payload: { type: 'object' },
    idempotency_key: printable(MAX_IDEMPOTENCY_KEY_LENGTH),
    ordering_key: printable(MAX_ORDERING_KEY_LENGTH),
  },
};

const PUBLISH_BATCH_SCHEMA = {
  type: 'object',
  required: ['events'],
  additionalProperties: false,
  properties: { events: { type: 'array', minItems: 1, maxItems: MAX_BATCH_EVENTS, items: PUBLISH_EVENT_SCHEMA } },
};

// No coercion, no defaults, nothing removed: the schema only answers whether the body is taken as sent.
const ajv = new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false });
const isPlainPublish = ajv.compile<PublishBody>(PUBLISH_EVENT_SCHEMA);
const isPlainBatch = ajv.compile<{ events: PublishBody[] }>(PUBLISH_BATCH_SCHEMA);

function toPublishRequest(body: PublishBody): PublishEventRequest {
  return Object.assign(new PublishEventRequest(), body);
}

/** A single publish's body as its DTO instance, or null: ask the DTO. */
export const acceptPublishBody: BodyAcceptor<PublishEventRequest> = (body) => (isPlainPublish(body) ? toPublishRequest(body) : null);

/** A batch's body as its DTO instance, or null: ask the DTO. */
export const acceptPublishBatchBody: BodyAcceptor<PublishEventBatchRequest> = (body) =>
  isPlainBatch(body) ? Object.assign(new PublishEventBatchRequest(), { events: body.events.map(toPublishRequest) }) : null;

/** The publish routes, direct (direct-routes.ts): the api's busiest, and its own cost per request matters most there. */
export const DIRECT_PUBLISH_ROUTES = [
  directRoute(EventController, 'publish', PublishEventRequest, acceptPublishBody),
  directRoute(EventController, 'publishBatch', PublishEventBatchRequest, acceptPublishBatchBody),
];
