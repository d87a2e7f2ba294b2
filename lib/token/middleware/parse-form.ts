import { createRequire } from 'node:module';
import express, { type Request, type RequestHandler } from 'express';

/** The form encoding, alone or with a UTF-8 charset (what containerd, Docker and curl send). */
const PLAIN_FORM = /^application\/x-www-form-urlencoded(?:[ \t]*;[ \t]*charset=(?:utf-8|"utf-8"))?$/i;
const DIGITS = /^[0-9]{1,9}$/;

/** Requests whose body the plain reader parsed: known to be a form without asking type-is again. */
const readAsForm = new WeakSet<Request>();

type QueryParse = (body: string, options: object) => Record<string, unknown>;
let qsParse: QueryParse | undefined;

/** The query-string parser body-parser's urlencoded uses (its `qs`), so both readers give the same object. */
function queryParser(): QueryParse {
  if (!qsParse) {
    const fromBodyParser = createRequire(createRequire(import.meta.url).resolve('body-parser'));
    qsParse = (fromBodyParser('qs') as { parse: QueryParse }).parse;
  }
  return qsParse;
}

/** An error the token error handler maps by `type`, as it maps body-parser's. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}

/**
 * Parses `application/x-www-form-urlencoded` bodies (containerd adds `; charset=utf-8`) with
 * duplicate fields kept as arrays, so the validator's `duplicateField` (reject-duplicates.ts) can see them.
 *
 * The common request (a declared Content-Length within `limit`, no Content-Encoding, the form
 * type with no charset or UTF-8) is read here: its chunks gathered, decoded as UTF-8 (a BOM
 * dropped, as body-parser's decoder does) and parsed with the options and the parser
 * body-parser's urlencoded uses (`extended: false`: depth 0, at most 100 parameters). Every other
 * request (compressed, chunked, too long, another charset or type) goes to `express.urlencoded`
 * as before, which refuses what it must. The plain reader skips body-parser's per-request
 * content-type, charset and raw-body machinery: about a tenth of the demo's CPU per token (issue 35).
 */
export function parseForm(limit: number): RequestHandler {
  const PARAMETER_LIMIT = 100;
  const general = express.urlencoded({ extended: false, limit, parameterLimit: PARAMETER_LIMIT });
  return (req, res, next) => {
    const headers = req.headers;
    const type = headers['content-type'];
    const length = headers['content-length'];
    if (
      type === undefined || length === undefined || headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined
      || !PLAIN_FORM.test(type) || !DIGITS.test(length) || Number(length) > limit || Number(length) === 0 || !req.readable || req.body !== undefined
    ) {
      general(req, res, next);
      return;
    }
    const expected = Number(length);
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
      if (err) {
        req.body = undefined;
        next(err);
        return;
      }
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
      const bom = raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf;
      const text = raw.toString('utf8', bom ? 3 : 0);
      let count = 1;
      for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) count += 1;
      if (count > PARAMETER_LIMIT) {
        next(bodyError(413, 'parameters.too.many', 'too many parameters'));
        return;
      }
      try {
        req.body = text.length === 0 ? {} : queryParser()(text, {
          allowPrototypes: true, arrayLimit: count, depth: 0, charset: 'utf-8', parameterLimit: PARAMETER_LIMIT, strictDepth: true,
        });
      } catch (err) {
        // body-parser's mapping: qs's depth RangeError has a type of its own, anything else is a parse failure.
        next(err instanceof RangeError ? bodyError(400, 'querystring.parse.rangeError', 'The input exceeded the depth') : bodyError(400, 'entity.parse.failed', 'the body cannot be parsed'));
        return;
      }
      readAsForm.add(req);
      next();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > expected) finish(bodyError(400, 'request.size.invalid', 'request size did not match content length'));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      finish(received === expected ? undefined : bodyError(400, 'request.size.invalid', 'request size did not match content length'));
    };
    const onAborted = () => finish(bodyError(400, 'request.aborted', 'request aborted'));
    const onError = (err: Error) => finish(Object.assign(err, { status: 400, statusCode: 400 }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onError);
  };
}

/** RFC 6749 §3.2 requires the form encoding: any other body type is `invalid_request`. */
export function isForm(req: Request): boolean {
  if (readAsForm.has(req)) return true;
  return typeof req.body === 'object' && req.body !== null && Boolean(req.is('application/x-www-form-urlencoded'));
}
