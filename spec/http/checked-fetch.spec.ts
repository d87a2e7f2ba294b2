import { afterAll, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { checkedFetch, connectRefusalIn, type ConnectTarget } from '../../lib/http/checked-fetch.js';

/** Two origins on loopback: `a` redirects `/moved` to `b`; both echo what they were sent. */
const seen: { origin: string; method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
function server(address: string) {
  const s = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += String(c);
    seen.push({ origin: address, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    if (req.url?.startsWith('/moved')) return res.writeHead(Number(req.url.slice(7)) || 307, { Location: `http://127.0.0.2:${await bPort}/there` }).end();
    res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Answer': 'yes' }).end(`hello from ${address}`);
  });
  const port = new Promise<number>((resolve) => s.listen(0, address, () => resolve((s.address() as { port: number }).port)));
  afterAll(() => new Promise((resolve) => s.close(resolve)));
  return port;
}
const aPort = server('127.0.0.1');
const bPort = server('127.0.0.2');

describe('checkedFetch: a fetch whose every connection passes a check where it is made', () => {
  test('a request the check lets through answers as fetch does: status, headers, streamed body; a body is sent', async () => {
    const asked: ConnectTarget[] = [];
    const f = checkedFetch((t) => void asked.push(t));
    const res = await f(`http://127.0.0.1:${await aPort}/x`, { method: 'PUT', headers: { 'X-Sent': '1' }, body: Readable.from(['a', 'b']), duplex: 'half' } as RequestInit);
    expect({ status: res.status, answer: res.headers.get('x-answer'), text: await res.text() }).toEqual({ status: 200, answer: 'yes', text: 'hello from 127.0.0.1' });
    expect(seen.at(-1)).toMatchObject({ method: 'PUT', body: 'ab', headers: expect.objectContaining({ 'x-sent': '1' }) });
    expect(asked).toEqual([{ host: '127.0.0.1', port: await aPort, address: '127.0.0.1' }]);
    expect((await f(`http://127.0.0.1:${await aPort}/x`, { method: 'HEAD' })).body).toBeNull();
  });

  test('a redirect is a new checked connection; Authorization does not follow it to another origin; 303 turns into GET', async () => {
    const asked: string[] = [];
    const f = checkedFetch(({ host, port }) => void asked.push(`${host}:${port}`));
    const res = await f(`http://127.0.0.1:${await aPort}/moved`, { headers: { Authorization: 'Bearer t' } });
    expect(await res.text()).toBe('hello from 127.0.0.2');
    expect(asked).toEqual([`127.0.0.1:${await aPort}`, `127.0.0.2:${await bPort}`]);
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
    await (await f(`http://127.0.0.1:${await aPort}/moved/303`, { method: 'POST', body: 'x' })).text();
    expect(seen.at(-1)).toMatchObject({ origin: '127.0.0.2', method: 'GET', body: '' });
  });

  test('a refused connection is never made: TypeError("fetch failed") caused by ConnectRefusedError with the check\'s reason, at the first hop or at a redirect', async () => {
    const before = seen.length;
    const refuseB = checkedFetch(({ host }) => (host === '127.0.0.2' ? 'not there' : undefined));
    const error = await refuseB(`http://127.0.0.2:${await bPort}/x`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(connectRefusalIn(error)?.message).toBe('not there');
    expect(seen.length).toBe(before);
    const redirected = await refuseB(`http://127.0.0.1:${await aPort}/moved`).catch((e: unknown) => e);
    expect(connectRefusalIn(redirected)?.message).toBe('not there');
    expect(seen.slice(before).map((s) => s.origin)).toEqual(['127.0.0.1']);
  });

  test('a name is checked on each address it resolves to', async () => {
    const asked: ConnectTarget[] = [];
    const f = checkedFetch((t) => (asked.push(t), t.address.startsWith('127.') || t.address === '::1' ? 'loopback' : undefined));
    expect(connectRefusalIn(await f(`http://localhost:${await aPort}/`).catch((e: unknown) => e))?.message).toBe('loopback');
    expect(asked[0]).toMatchObject({ host: 'localhost', port: await aPort });
  });

  test('redirect: "error" refuses to follow; "manual" answers the redirect itself', async () => {
    const f = checkedFetch(() => undefined);
    await expect(f(`http://127.0.0.1:${await aPort}/moved`, { redirect: 'error' })).rejects.toThrow(TypeError);
    expect((await f(`http://127.0.0.1:${await aPort}/moved`, { redirect: 'manual' })).status).toBe(307);
  });
});
