import { InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';

/** A file holding one JSON object; anything else is a usage error before anything is sent. */
export function jsonObjectFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(`${path} must hold a JSON object.`);
  return value as Record<string, unknown>;
}

/** A JSON object written on the command line (`'{"queue.id": "q-1"}'`) or, when it does not start with `{`, a file holding one. */
export function jsonObjectInlineOrFile(text: string): Record<string, unknown> {
  if (!text.trimStart().startsWith('{')) return jsonObjectFile(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidArgumentError('must be a JSON object.');
  return value as Record<string, unknown>;
}
