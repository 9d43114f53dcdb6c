import { InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';

/** JSON text that must hold one object (`what` names where it came from); anything else is a usage error before anything is sent. */
export function jsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`${what} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(`${what} must hold a JSON object.`);
  return value as Record<string, unknown>;
}

/** A file holding one JSON object. */
export function jsonObjectFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return jsonObject(text, path);
}

/** A JSON object written on the command line (`'{"queue.id": "q-1"}'`) or, when it does not start with `{`, a file holding one. */
export function jsonObjectInlineOrFile(text: string): Record<string, unknown> {
  return text.trimStart().startsWith('{') ? jsonObject(text, 'the text') : jsonObjectFile(text);
}
