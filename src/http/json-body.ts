import express, { type RequestHandler } from 'express';
import { BadRequest } from './errors';

/** No request body the service takes nests deeper than this; code that walks a body may recurse this far. */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `Request body is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]); // [ {
const CLOSERS = new Set([0x5d, 0x7d]); // ] }

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, in one pass over its bytes that
 * counts brackets outside strings: no parse and no recursion, so a hostile body costs one loop.
 * JSON's structural characters are ASCII, and no byte of a multi-byte UTF-8 character is ASCII, so
 * UTF-8 is scanned as it is. Malformed text may be miscounted: the parser refuses it anyway.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (OPENERS.has(byte)) {
      depth += 1;
      if (depth > limit) return true;
    } else if (CLOSERS.has(byte)) depth -= 1;
  }
  return false;
}

/** Refuses JSON text nested deeper than MAX_JSON_DEPTH with a 400: call it before JSON.parse. */
export function refuseDeepJson(text: string | Uint8Array): void {
  if (nestsDeeperThan(typeof text === 'string' ? Buffer.from(text) : text, MAX_JSON_DEPTH))
    throw BadRequest(TOO_DEEP_MESSAGE);
}

/** UTF-16 and UTF-32 bodies (which JSON allows a charset for) are scanned as UTF-8 text. */
function utf8Of(body: Buffer, charset: string): Uint8Array {
  if (charset === 'utf-8' || charset === 'utf8') return body;
  try {
    return Buffer.from(new TextDecoder(charset).decode(body));
  } catch {
    return body;
  }
}

/**
 * The JSON body parser: at most `limit` bytes, and refused (400) when nested deeper than
 * MAX_JSON_DEPTH, checked on the bytes before JSON.parse so that no walk of the parsed value
 * (the NUL check, zod, the MCP SDK) can overflow the stack.
 */
export function jsonBody(limit: string): RequestHandler {
  return express.json({
    limit,
    verify: (_req, _res, body, charset) => refuseDeepJson(utf8Of(body, charset ?? 'utf-8')),
  });
}
