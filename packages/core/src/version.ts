/** Herald's version, as in User-Agent and the OpenAPI document. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const HERALD_VERSION: string = require('../package.json').version;
