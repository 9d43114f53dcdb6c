// PRODUCT.md §12: the JavaScript shipped stays within 250 KB gzipped. Fails the build above it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 250 * 1000;
const assets = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/assets');
const files = readdirSync(assets).filter((name) => name.endsWith('.js'));
if (files.length === 0) {
  console.error(`console: no JavaScript in ${assets}`);
  process.exit(1);
}
let total = 0;
for (const name of files) total += gzipSync(readFileSync(path.join(assets, name)), { level: 9 }).length;
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;
if (total > BUDGET_BYTES) {
  console.error(`console: JavaScript is ${kb(total)} gzipped, over the ${kb(BUDGET_BYTES)} budget (${files.join(', ')})`);
  process.exit(1);
}
console.log(`console: JavaScript ${kb(total)} gzipped (budget ${kb(BUDGET_BYTES)})`);
