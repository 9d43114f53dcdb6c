import { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import pino from 'pino';
import { NestPinoLogger } from './nest-pino-logger';

/** A NestPinoLogger over a pino logger that keeps its lines, parsed. */
function recording() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const pinoLogger = pino({ level: 'trace', base: { service: 'herald-worker' }, timestamp: false }, stream);
  return { lines, logger: new NestPinoLogger(pinoLogger) };
}

describe('NestPinoLogger', () => {
  afterEach(() => Logger.overrideLogger(false));

  it("writes Nest's (message, context) calls with the context and pino's levels", () => {
    const { lines, logger } = recording();
    logger.log('worker started');
    logger.warn('LISTEN connection lost', 'DeliveryLoop');
    logger.verbose('details', 'DeliveryLoop');
    expect(lines).toEqual([
      { level: 30, service: 'herald-worker', msg: 'worker started' },
      { level: 40, service: 'herald-worker', context: 'DeliveryLoop', msg: 'LISTEN connection lost' },
      { level: 10, service: 'herald-worker', context: 'DeliveryLoop', msg: 'details' },
    ]);
  });

  it("writes pino's (object, message) calls as fields, with the context a Nest Logger appends", () => {
    const { lines, logger } = recording();
    Logger.overrideLogger(logger);
    new Logger('DeliveryLoop').error({ deliveryId: 'dlv_1' }, 'attempt could not be recorded');
    logger.error({ requestId: 'req-1' }, 'unexpected error');
    expect(lines).toEqual([
      { level: 50, service: 'herald-worker', context: 'DeliveryLoop', deliveryId: 'dlv_1', msg: 'attempt could not be recorded' },
      { level: 50, service: 'herald-worker', requestId: 'req-1', msg: 'unexpected error' },
    ]);
  });

  it('writes an Error with its message and its stack under err', () => {
    const { lines, logger } = recording();
    logger.error(new Error('disk on fire'), 'AppExceptionFilter');
    expect(lines).toEqual([
      {
        level: 50,
        service: 'herald-worker',
        context: 'AppExceptionFilter',
        err: expect.objectContaining({ type: 'Error', message: 'disk on fire', stack: expect.stringContaining('disk on fire') }),
        msg: 'disk on fire',
      },
    ]);
  });
});
