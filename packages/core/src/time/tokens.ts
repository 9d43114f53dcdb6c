/** Injection tokens for the Clock and IdGenerator, shared by the api and the worker. */
export const CLOCK = Symbol('CLOCK');
export const ID_GENERATOR = Symbol('ID_GENERATOR');
/** The parsed HeraldConfig, injected where configuration is needed. */
export const HERALD_CONFIG = Symbol('HERALD_CONFIG');
