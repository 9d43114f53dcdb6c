import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

// Testing Library unmounts between tests by itself only under vitest's globals; say it here.
afterEach(() => cleanup());
