import { describe, expect, it } from 'vitest';
import { fieldErrors } from './field-errors';

const FIELDS = ['url', 'retry_config.retry_value', 'retry_config.max_retries', 'retry_config', 'headers'];

describe('fieldErrors (API details → form fields)', () => {
  it('puts each detail beside the field it names', () => {
    const { byField, other } = fieldErrors(
      [
        { field: 'url', message: 'url must be an absolute http or https URL' },
        { field: 'retry_config.max_retries', message: 'retry_config.max_retries must not be greater than 25' },
      ],
      FIELDS,
    );
    expect(byField).toEqual({
      url: 'url must be an absolute http or https URL',
      'retry_config.max_retries': 'retry_config.max_retries must not be greater than 25',
    });
    expect(other).toEqual([]);
  });

  it('gives a header-map detail (headers.Host) to the header editor', () => {
    expect(fieldErrors([{ field: 'headers.Host', message: 'Host is reserved' }], FIELDS).byField).toEqual({ headers: 'Host is reserved' });
  });

  it('joins two messages for one field, and keeps details of no field for the top of the form', () => {
    const { byField, other } = fieldErrors(
      [
        { field: 'url', message: 'first.' },
        { field: 'url', message: 'second.' },
        { field: 'colour', message: 'property colour should not exist' },
        { field: '', message: 'body is not an object' },
      ],
      FIELDS,
    );
    expect(byField).toEqual({ url: 'first. second.' });
    expect(other).toEqual(['colour: property colour should not exist', 'body is not an object']);
  });

  it('prefers the exact field over its parent object', () => {
    expect(fieldErrors([{ field: 'retry_config.retry_value', message: 'too small' }], FIELDS).byField).toEqual({
      'retry_config.retry_value': 'too small',
    });
    expect(fieldErrors([{ field: 'retry_config.backoff_type', message: 'bad' }], FIELDS).byField).toEqual({ retry_config: 'bad' });
  });
});
