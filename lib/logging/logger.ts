import type { Request } from 'express';

type LogFn = (fields: Record<string, unknown>, message?: string) => void;

/**
 * What dockgate needs of a logger: pino's methods (a pino logger, or a child of one, fits as it
 * is). Fields first, message second, as pino takes them.
 */
export interface DockgateLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): DockgateLogger;
}

/** Validates the `logger` option once, at construction; undefined when none was given. */
export function resolveLogger(value: unknown, owner: string): DockgateLogger | undefined {
  if (value === undefined) return undefined;
  const l = value as Partial<DockgateLogger> | null;
  for (const method of ['debug', 'info', 'warn', 'error', 'child'] as const) {
    if (typeof l?.[method] !== 'function') throw new TypeError(`${owner} option "logger" must be a pino-compatible logger (it lacks ${method}())`);
  }
  return value as DockgateLogger;
}

/**
 * The logger of one request: the host's per-request child (`req.log`, where pino-http and
 * similar middleware put it, carrying the request id) when there is one, else the router's.
 */
export function requestLog(req: Request | undefined, fallback: DockgateLogger): DockgateLogger {
  const own = (req as { log?: Partial<DockgateLogger> } | undefined)?.log;
  return own && typeof own.info === 'function' && typeof own.warn === 'function' ? own as DockgateLogger : fallback;
}

/** An error as log fields: name, code and message only, never a request or its headers. */
export function errorFields(err: unknown): Record<string, unknown> {
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | null;
  // `error`, not pino's `err`: its serializer would add an empty stack and a type.
  return { error: { name: typeof e?.name === 'string' ? e.name : 'Error', ...(typeof e?.code === 'string' ? { code: e.code } : {}), message: typeof e?.message === 'string' ? e.message : String(err) } };
}
