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
/** The MCP surface's error format (the MCP client routes, /mcp, and any request made with an MCP key). */
export const McpErrorBody = z
  .object({ error: z.object({ code: z.string(), message: z.string(), timestamp: z.string() }) })
  .openapi('McpError');
export const MessageBody = z.object({ message: z.string() }).openapi('Message');
/** A CSV download (format=csv): UTF-8 text, a header row first. */
export const CsvText = z.string().openapi({ description: 'CSV text (UTF-8), a header row first' });

export function createDocsRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'connect.sid' });
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  registry.registerComponent('securitySchemes', 'mcpKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'An MCP API key (mcp_...) from POST /api/mcp/keys',
  });
  return registry;
}

export function generateOpenApiDocument(registry: OpenAPIRegistry, version: string) {
  const document = new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: {
      title: 'Stores Service API',
      version,
      description:
        'Inventory, quoting and sales service of the university stores counter. ' +
        'Errors are {message} (+ error detail outside production); validation errors are {message, errors:[{field, message}]}.',
      contact: { name: 'The stores service team, through the university IT service desk' },
      license: { name: "Proprietary: the university's own service, not licensed for use elsewhere" },
    },
    servers: [{ url: '/' }],
  });
  return withTypedNulls(document);
}

type SchemaNode = { [key: string]: unknown };
const isNode = (value: unknown): value is SchemaNode => typeof value === 'object' && value !== null;
const SHAPE_KEYS = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum'];

/**
 * OpenAPI 3.0 has no null type: `nullable` must stand beside a `type`. The generator writes a
 * bare `{nullable: true}` for zod's null (a branch of a union: "or null") and for unknown values
 * (anything, null included). The first becomes the 3.0 form of null, a nullable type whose only
 * value is null; the second an empty schema, which allows any value.
 */
function withTypedNulls<T>(document: T): T {
  const visit = (node: unknown, inUnion: boolean): unknown => {
    if (Array.isArray(node)) return node.map((child) => visit(child, inUnion));
    if (!isNode(node)) return node;
    if (node.nullable === true && !SHAPE_KEYS.some((key) => key in node)) {
      const { nullable: _nullable, ...rest } = node;
      return inUnion ? { ...rest, type: 'string', nullable: true, enum: [null] } : rest;
    }
    return Object.fromEntries(
      Object.entries(node).map(([key, child]) => [key, visit(child, key === 'anyOf' || key === 'oneOf')]),
    );
  };
  return visit(document, false) as T;
}
