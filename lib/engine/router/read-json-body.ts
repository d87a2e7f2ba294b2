import type { Request } from 'express';
import { EngineError } from '../errors/engine-error.js';

/**
 * Reads a JSON request body the way dockerd's CheckForJSON + decode do: a Content-Type other
 * than JSON is a 400 naming it; no Content-Type is fine only with an empty body. Unlike
 * dockerd (which answers 500), malformed JSON is a 400: it is the client's input.
 * Resolves `undefined` for an empty body.
 */
export async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  const contentType = req.headers['content-type'];
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw EngineError.invalidParameter(`request body is larger than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  if (!isJsonMediaType(contentType ?? '')) {
    throw EngineError.invalidParameter(`Content-Type specified (${contentType ?? ''}) must be 'application/json'`);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw EngineError.invalidParameter(`invalid JSON in request body: ${(error as Error).message}`);
  }
}

function isJsonMediaType(value: string): boolean {
  return value.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
