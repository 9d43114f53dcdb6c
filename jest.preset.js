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

// Dependencies published only as ES modules. Node 20.19 requires them natively; jest's module
// system cannot, so they are compiled to CommonJS for the tests (@fastify/static → content-disposition).
const ESM_ONLY = ['content-disposition'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': swc,
    [`/node_modules/(\\.pnpm/)?(${ESM_ONLY.join('|')})[@/].+\\.js$`]: swc,
  },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${ESM_ONLY.join('|')})[@/])`],
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
