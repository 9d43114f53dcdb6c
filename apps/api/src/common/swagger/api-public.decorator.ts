import { SetMetadata } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';

/**
 * Documents the routes as answering without a key: `security: []`, which says so explicitly
 * (an operation with no `security` at all would read as one whose requirement was forgotten).
 * Pair it with @Public(), which is what actually lets the request through.
 */
export const ApiPublic = (): ClassDecorator & MethodDecorator => SetMetadata(DECORATORS.API_SECURITY, []);
