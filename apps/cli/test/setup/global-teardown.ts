import { jestGlobalTeardown } from '@herald/database/dist/testing';

export default jestGlobalTeardown;
