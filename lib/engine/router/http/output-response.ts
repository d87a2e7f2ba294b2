import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { OutputStream } from '../../../engine-api/runtime-types.js';
import { encodeFrame, STREAM_SYSTEMERR } from '../../../engine-api/stdcopy.js';
import { apiVersionLessThan } from '../../../engine-api/api-version.js';
import { drainOrClose } from '../../../engine-api/drain-or-close.js';
import { EngineError } from '../../../engine-api/engine-error.js';

// How the engine routes answer with a stream: its Content-Type, piping it with back-pressure,
// JSON-lines progress (pull, push, load, build), and noticing a client that left.

/** From API 1.42 dockerd labels output streams; before, logs had no Content-Type. */
export function streamContentType(output: OutputStream, version: string): string | undefined {
  if (apiVersionLessThan(version, '1.42')) return undefined;
  return output.multiplexed ? 'application/vnd.docker.multiplexed-stream' : 'application/vnd.docker.raw-stream';
}

/**
 * Pipes an output stream to the response with back-pressure. A failure after the status line
 * went out is reported in-band as dockerd does (a systemerr frame "Error grabbing logs: …")
 * when the stream is multiplexed, otherwise by cutting the connection.
 */
export async function sendOutput(output: OutputStream, res: Response): Promise<void> {
  try {
    await pipeline(output.stream, res, { end: false });
    res.end();
  } catch (error) {
    if (res.destroyed || res.writableEnded) return;
    if (output.multiplexed) res.end(encodeFrame(STREAM_SYSTEMERR, Buffer.from(`Error grabbing logs: ${(error as Error).message}\n`)));
    else res.destroy();
  }
}

/** An AbortSignal that fires when the client goes away before the answer is complete. */
export function abortOnClose(req: Request, res: Response): AbortController {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  req.on('aborted', () => abort.abort());
  return abort;
}

/**
 * Streams JSON-lines progress. Once the 200 is out, a failure can only be reported in-band, and
 * dockerd does it with a final `{"errorDetail":{"message":…},"error":…}` line, which the CLI
 * prints as the error.
 */
export async function sendProgress(progress: Readable, res: Response, failure = 'pull failed'): Promise<void> {
  try {
    for await (const chunk of progress) {
      if (!res.write(chunk as Buffer)) {
        await drainOrClose(res);
      }
      // Leaving the loop destroys the runtime's stream (and so aborts a forwarded pull).
      if (res.destroyed) return;
    }
    res.end();
  } catch (error) {
    if (res.destroyed || res.writableEnded) return;
    const message = error instanceof EngineError ? error.message : failure;
    res.end(`${JSON.stringify({ errorDetail: { message }, error: message })}\n`);
  }
}
