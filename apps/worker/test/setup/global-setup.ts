import { jestGlobalSetup } from '@herald/database/dist/testing';

export default jestGlobalSetup;
