import { z } from 'zod';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A tool's JSON Schema as every MCP client reads it. zod spells a nullable plain field
 * `type: ["string", "null"]`, which draft 7 allows but several clients and the Inspector's --strict
 * refuse; the same schema as `anyOf` says the same thing and passes everywhere.
 */
export function portableJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  // the schemas are module constants and every request builds its own server: convert each once
  const converted =
    CONVERTED[io].get(schema) ??
    (typeArraysAsAnyOf(z.toJSONSchema(schema, { target: 'draft-7', io }) as Json) as Record<string, unknown>);
  CONVERTED[io].set(schema, converted);
  return converted;
}

const CONVERTED = {
  input: new WeakMap<z.ZodType, Record<string, unknown>>(),
  output: new WeakMap<z.ZodType, Record<string, unknown>>(),
};

function typeArraysAsAnyOf(node: Json): Json {
  if (Array.isArray(node)) return node.map(typeArraysAsAnyOf);
  if (node === null || typeof node !== 'object') return node;
  const { type, ...rest } = node;
  const walked = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, typeArraysAsAnyOf(value)]));
  // a property named "type" is a schema, not a type keyword: walk it like any other
  if (!Array.isArray(type)) return type === undefined ? walked : { type: typeArraysAsAnyOf(type), ...walked };
  return { ...walked, anyOf: type.map((member) => ({ type: member })) };
}
