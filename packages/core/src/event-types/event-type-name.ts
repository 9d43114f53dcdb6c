export const EVENT_TYPE_NAME_MAX_LENGTH = 64;

/** Event names: lowercase letters, digits, `_` and `.`, 1 to EVENT_TYPE_NAME_MAX_LENGTH characters. */
export const EVENT_TYPE_NAME_PATTERN = new RegExp(`^[a-z0-9_.]{1,${EVENT_TYPE_NAME_MAX_LENGTH}}$`);

/** Delivered by `POST /application/{id}/webhook/test` whether or not the application subscribes. */
export const TEST_EVENT_TYPE = 'webhook.test';
