// Shared jest settings: TypeScript through @swc/jest with the decorator options Nest needs
// (without decoratorMetadata, constructor injection silently breaks).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

// Every dependency is CommonJS (content-disposition is held at 2.x, see pnpm-workspace.yaml), so
// node_modules are not transformed. An ES-module-only dependency would need a transform entry
// here: jest's module system cannot require ES modules, although Node 20.19 can.
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
