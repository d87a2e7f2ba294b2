/** Shared pieces of the hardening specs: raw sockets for requests supertest cannot send, and shape checks. */
import { connect, type Socket } from 'node:net';
import { expect } from '@jest/globals';

/** What came back on a raw connection: the bytes, and whether the server closed it. */
export interface RawAnswer {
  text: string;
  status: number | undefined;
  closedByServer: boolean;
}

/**
 * Writes `data` (string chunks are written in order, with `pauseMs` between them) on a fresh
 * connection and collects the answer until the server closes or `waitMs` passes. The socket is
 * always destroyed afterwards, so no test leaks a connection.
 */
export function rawRequest(target: { port: number } | { path: string }, data: string | Buffer | (string | Buffer)[], waitMs = 400, pauseMs = 0): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket: Socket = 'port' in target ? connect(target.port, '127.0.0.1') : connect(target.path);
    const chunks: Buffer[] = [];
    let closedByServer = false;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ text, status: status === undefined ? undefined : Number(status), closedByServer });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('close', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', () => finish());
    socket.on('connect', async () => {
      const parts = Array.isArray(data) ? data : [data];
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}

/** Header value from a raw answer (first occurrence, case-insensitive name). */
export function rawHeader(answer: RawAnswer, name: string): string | undefined {
  const head = answer.text.split('\r\n\r\n')[0] ?? '';
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0 && line.slice(0, i).toLowerCase() === name.toLowerCase()) return line.slice(i + 1).trim();
  }
  return undefined;
}

/** Body of a raw answer (after the blank line; not de-chunked). */
export function rawBody(answer: RawAnswer): string {
  const i = answer.text.indexOf('\r\n\r\n');
  return i === -1 ? '' : answer.text.slice(i + 4);
}

/** The engine API's error shape: `{"message": string}` with Content-Type exactly application/json. */
export function expectEngineError(res: { status: number; headers: Record<string, unknown>; text: string }, status: number, message?: RegExp | string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json');
  const body = JSON.parse(res.text) as { message?: unknown };
  expect(Object.keys(body)).toEqual(['message']);
  expect(typeof body.message).toBe('string');
  if (message !== undefined) expect(body.message).toMatch(message);
}

/** RFC 6749 §5.2 error JSON (plus Docker's `details`/`errors[]`), never cacheable. */
export function expectOAuthError(res: { status: number; headers: Record<string, unknown>; body: unknown }, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.body as { error?: unknown; error_description?: unknown; errors?: unknown };
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  expect(Array.isArray(body.errors)).toBe(true);
}

/** The registry error shape: `{"errors":[{code,message,…}]}`, Content-Type exactly application/json. */
export function expectRegistryError(res: { status: number; headers: Record<string, unknown>; body: unknown }, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json');
  const body = res.body as { errors?: { code?: unknown; message?: unknown }[] };
  expect(body.errors?.[0]?.code).toBe(code);
  expect(typeof body.errors?.[0]?.message).toBe('string');
}
