import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { request as httpRequest, type Server } from 'node:http';
import { parseForm } from '../../../lib/token/middleware/parse-form.js';

// Both readers answer with what they parsed: the token router's (parseForm) and body-parser's
// urlencoded with the options it had before (the reference).
let server: Server;
let port: number;
const LIMIT = 2048;

beforeAll(async () => {
  const app = express();
  const answer: express.RequestHandler = (req, res) => {
    res.json({ body: req.body === undefined ? null : { ...(req.body as object) } });
  };
  app.post('/ours', parseForm(LIMIT), answer);
  app.post('/reference', express.urlencoded({ extended: false, limit: LIMIT, parameterLimit: 100 }), answer);
  app.use(((err, _req, res, _next) => {
    res.status(err.status ?? 500).json({ status: err.status, type: err.type ?? null });
  }) as express.ErrorRequestHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** POSTs `body` with `headers` (Content-Length as given, or the body's), in `chunks` pieces. */
function post(path: string, body: Buffer, headers: Record<string, string>, chunks = 1): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-length': String(body.length), ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }));
    });
    req.on('error', reject);
    const step = Math.ceil(body.length / chunks) || 1;
    for (let i = 0; i < body.length; i += step) req.write(body.subarray(i, i + step));
    req.end();
  });
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BODIES: [string, Buffer][] = [
  ['a refresh grant', Buffer.from('grant_type=refresh_token&refresh_token=abc&service=registry.local&client_id=docker&scope=repository%3Aalice%2Fhello%3Apull')],
  ['a repeated field, kept as an array', Buffer.from('scope=a&scope=b&scope=c&grant_type=password')],
  ['plus as space, percent escapes and a bad escape', Buffer.from('username=al+ice&password=p%26w%3D%25&bad=%E0%A4%A&x=%zz')],
  ['keys with brackets, __proto__, constructor and an empty key', Buffer.from('a[b]=1&__proto__=x&constructor=y&=z&c[]=2&c[]=3')],
  ['fields without a value and empty pairs', Buffer.from('a&b=&&c=1&')],
  ['a UTF-8 BOM before the form', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a=1&b=2')])],
  ['invalid UTF-8', Buffer.concat([Buffer.from('a='), Buffer.from([0xff, 0xfe]), Buffer.from('&b=%C3%A9')])],
  ['exactly 100 parameters', Buffer.from(Array.from({ length: 100 }, (_, i) => `p${i}=${i}`).join('&'))],
  ['101 parameters (413)', Buffer.from(Array.from({ length: 101 }, (_, i) => `p${i}=${i}`).join('&'))],
  ['a body over the limit (413)', Buffer.from(`a=${'x'.repeat(LIMIT)}`)],
];

describe('the token form is parsed as body-parser\'s urlencoded parses it (extended: false, 100 parameters)', () => {
  test.each(BODIES)('%s', async (_name, body) => {
    const ours = await post('/ours', body, FORM, 3);
    expect(ours).toEqual(await post('/reference', body, FORM));
  });
  test.each([
    ['with charset=utf-8', 'application/x-www-form-urlencoded; charset=utf-8'],
    ['with charset="UTF-8"', 'application/x-www-form-urlencoded;charset="UTF-8"'],
    ['with charset=iso-8859-1', 'application/x-www-form-urlencoded; charset=iso-8859-1'],
    ['with charset=koi8-r (415)', 'application/x-www-form-urlencoded; charset=koi8-r'],
    ['of another type (not parsed)', 'application/json'],
  ])('a content type %s', async (_name, type) => {
    const body = Buffer.from('a=%E9t%C3%A9&b=2');
    const ours = await post('/ours', body, { 'content-type': type });
    expect(ours).toEqual(await post('/reference', body, { 'content-type': type }));
  });
});
