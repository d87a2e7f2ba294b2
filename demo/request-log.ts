import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

declare module 'http' {
  interface IncomingMessage {
    /** The request id: the caller's X-Request-Id when it is a sane token, else a random UUID. */
    id?: string;
    /** pino child logger carrying `reqId`; dockgate's routers log their lines through it. */
    log?: Logger;
  }
}

/** An incoming X-Request-Id is kept only when short and plain, so it cannot forge log fields or headers. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id and a pino child logger carrying it (`req.log`), and echoes the id
 * as X-Request-Id. A few lines of our own rather than pino-http, which is not a dependency:
 * dockgate only needs `req.log` to be there (its routers write their lines through it), and an
 * access-log line per request is the host's choice, not the demo's to make.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    // The child logger is made when a line is first written: most requests (a pull's dozens of
    // registry and engine reads) write none, and a child is an object and its bindings to build.
    let log: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (log ??= logger.child({ reqId: id })),
      set: (value: Logger) => { log = value; },
    });
    res.setHeader('X-Request-Id', id);
    next();
  };
}
