import { HERALD_VERSION } from '@herald/core';
import { ErrorResponse } from '@herald/contracts';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** Swagger UI at /docs and the OpenAPI document at /docs-json, served from node_modules (offline). */
export function setupSwagger(app: NestFastifyApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Herald')
    .setDescription(
      'Webhook configuration and delivery. Every request carries `Authorization: <API_KEY>` ' +
        '(`Bearer <API_KEY>` is accepted too). Every error answers with `{ success: false, error: { code, message, details? }, request_id }`; ' +
        'the codes are listed by `GET /error_codes`.',
    )
    .setVersion(HERALD_VERSION)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization' }, 'api-key')
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorResponse] });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
}
