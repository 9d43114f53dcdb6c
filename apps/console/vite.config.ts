import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Served by the api at /console: hashed asset names under /console/assets/ (cached for a year),
// nothing inline (the page's Content-Security-Policy allows only 'self').
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  test: {
    reporters: ['default', 'json'],
    // scripts/run-tests.js reads jest's --json summary; vitest's json reporter writes the same fields.
    outputFile: { json: '.jest-results.json' },
    projects: [
      {
        extends: true,
        test: { name: 'components', environment: 'jsdom', include: ['src/**/*.test.{ts,tsx}'], setupFiles: ['test/setup-components.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          environment: 'node',
          include: ['test/**/*.browser-spec.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
