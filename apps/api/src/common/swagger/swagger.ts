import { HERALD_VERSION } from '@herald/core';
import { ErrorResponse } from '@herald/contracts';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { documentResponseHeaders } from './response-headers';

/** Swagger UI at /docs and the OpenAPI document at /docs-json, served from node_modules (offline). */
export function setupSwagger(app: NestFastifyApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Herald')
    .setDescription(
      'Webhook configuration and delivery. Every request carries `Authorization: <API_KEY>` ' +
        '(`Bearer <API_KEY>` is accepted too), except the operational probes `/healthz`, `/readyz` and `/metrics`. ' +
        'Every error answers with `{ success: false, error: { code, message, details? }, request_id }`; ' +
        'the codes are listed by `GET /error_codes`. Every answer carries `X-Request-Id`; a method a path does not take ' +
        'is answered 405 `405-00` with `Allow`.',
    )
    .setVersion(HERALD_VERSION)
    // Relative: the API is wherever this document was fetched from (behind a proxy, in a
    // container, on any port), which a URL built from PORT would get wrong. `/` is also what
    // OpenAPI assumes when `servers` is absent; stating it keeps clients and linters from guessing.
    .addServer('/', 'This Herald API')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization' }, 'api-key')
    .build();
  const document = documentResponseHeaders(SwaggerModule.createDocument(app, config, { extraModels: [ErrorResponse] }));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
}
