import { OpenAPIRegistry, OpenApiGeneratorV3, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { OpenAPIRegistry };

export const ErrorBody = z.object({ message: z.string(), error: z.string().optional() }).openapi('Error');
export const ValidationErrorBody = z
  .object({ message: z.string(), errors: z.array(z.object({ field: z.string(), message: z.string() })) })
  .openapi('ValidationError');
/** What a 400 carries: the fields refused ({message, errors}), or a refusal in a sentence ({message}: malformed JSON, a rule of the request). */
export const BadRequestBody = z.union([ValidationErrorBody, ErrorBody]).openapi('BadRequest');
export const MessageBody = z.object({ message: z.string() }).openapi('Message');

export function createDocsRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'connect.sid' });
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  registry.registerComponent('securitySchemes', 'mcpKey', { type: 'http', scheme: 'bearer', description: 'An MCP API key (mcp_...) from POST /api/mcp/keys' });
  return registry;
}

export function generateOpenApiDocument(registry: OpenAPIRegistry, version: string) {
  return new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: {
      title: 'Stores Service API',
      version,
      description:
        'Inventory, quoting and sales service of the university stores counter. ' +
        'Errors are {message} (+ error detail outside production); validation errors are {message, errors:[{field, message}]}.',
    },
    servers: [{ url: '/' }],
  });
}
