import type { NextFunction, Request, Response, Router } from 'express';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { engineRoute, type EngineContext } from '../http/context.js';
import { abortOnClose } from '../http/output-response.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { queryString } from '../http/query.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import { importUrl } from '../http/import-source.js';

/**
 * `POST /images/create?fromSrc=…` (`docker import`), ahead of the pull on the same path: the
 * request body (`fromSrc=-`) or what an http(s) URL answers becomes a one-layer image, with
 * `repo`/`tag`, `message` and `changes`. Answers dockerd's JSON status lines, the last one the
 * image ID (`{"status":"sha256:…"}`); a URL import starts with `Downloading from <url>`. The
 * tar's size is capped by the runtime (a layer's cap). A request without `fromSrc` (or with
 * `fromImage`) is the pull's.
 */
export function registerImageImportRoute(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const importRoute = engineRoute(ctx, 'image.import', async (req, res, version) => {
    const source = queryString(req.query.fromSrc) as string;
    if (!runtime.importImage) {
      req.resume();
      throw EngineError.unsupported('importing images (docker import)', runtime.name);
    }
    const repo = queryString(req.query.repo);
    const tag = queryString(req.query.tag);
    const ref = repo !== undefined && repo !== '' ? parsePullReference(repo, tag).ref : undefined;
    const message = queryString(req.query.message);
    const changes = listQuery(req.query.changes);
    const abort = abortOnClose(req, res);
    let tar: Readable = req;
    if (source !== '-') {
      req.resume();
      tar = await download(source, importUrl(source), abort.signal);
    }
    const importing = runtime.importImage({ tar, source, ...(ref ? { ref } : {}), ...(message !== undefined ? { message } : {}), changes, apiVersion: version, signal: abort.signal });
    if (source === '-') {
      // A refused change or a broken tar is the status it is: nothing has been answered yet.
      const id = await importing.finally(() => req.resume());
      res.status(200).type('application/json').end(`${JSON.stringify({ status: id })}\n`);
      return;
    }
    res.status(200).setHeader('Content-Type', 'application/json');
    res.write(`${JSON.stringify({ status: `Downloading from ${source}` })}\n`);
    try {
      res.end(`${JSON.stringify({ status: await importing })}\n`);
    } catch (error) {
      if (!(error instanceof EngineError) || error.status >= 500) ctx.settings.onError?.(error, req);
      const text = error instanceof EngineError ? error.message : 'import failed';
      res.end(`${JSON.stringify({ errorDetail: { message: text }, error: text })}\n`);
    }
  });
  api.post('/images/create', (req: Request, res: Response, next: NextFunction) => {
    const fromSrc = queryString(req.query.fromSrc);
    const fromImage = queryString(req.query.fromImage);
    if (fromSrc !== undefined && fromSrc !== '' && (fromImage === undefined || fromImage === '')) return void importRoute(req, res, next);
    next();
  });
}

/** What the URL (`href`, checked by `importUrl`) answers, as a stream; errors name `fromSrc` as sent, in dockerd's words. */
async function download(fromSrc: string, href: string, signal: AbortSignal): Promise<Readable> {
  let answer: globalThis.Response;
  try {
    answer = await fetch(href, { signal, redirect: 'follow' });
  } catch (error) {
    throw EngineError.invalidParameter(`Get "${fromSrc}": ${(error as Error).message}`);
  }
  if (!answer.ok || !answer.body) throw EngineError.invalidParameter(`Get "${fromSrc}": ${answer.status} ${answer.statusText}`);
  return Readable.fromWeb(answer.body as unknown as WebReadableStream<Uint8Array>);
}

/** A repeated query parameter (`changes=A&changes=B`) as its values. */
function listQuery(value: unknown): string[] {
  if (value === undefined) return [];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((v): v is string => typeof v === 'string');
}
