/** Event names: lowercase letters, digits, `_` and `.`, 1 to 64 characters. */
export const EVENT_TYPE_NAME_PATTERN = /^[a-z0-9_.]{1,64}$/;

/** Delivered by `POST /application/{id}/webhook/test` whether or not the application subscribes. */
export const TEST_EVENT_TYPE = 'webhook.test';
