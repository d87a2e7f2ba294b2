import type { Request } from 'express';
import { EngineError } from '../../../engine-api/engine-error.js';
import { isUpgradeEvent, readUpgradeBody } from './hijack.js';

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
  if (isUpgradeEvent(req)) {
    const body = await readUpgradeBody(req, maxBytes);
    chunks.push(body);
    size = body.length;
  } else try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) throw EngineError.invalidParameter(`request body is larger than ${maxBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof EngineError) throw error;
    // The client went away mid-body (Node's "aborted"): its input, not a server failure.
    throw EngineError.invalidParameter('request body was not received in full');
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
    // V8 quotes the text around the error ("…\"=s3cr3t\", x]}\" is not valid JSON"): an Env
    // value may be a secret, and the Docker CLI prints this message, so the quote is cut off.
    const reason = (error as Error).message.replace(/, (?:\.\.\.)?".*$/s, '');
    throw EngineError.invalidParameter(`invalid JSON in request body: ${reason}`);
  }
}

function isJsonMediaType(value: string): boolean {
  return value.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
