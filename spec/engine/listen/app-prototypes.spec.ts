import { describe, expect, test } from '@jest/globals';
import express from 'express';
import { IncomingMessage, ServerResponse } from 'node:http';
import { appPrototypes, listenEngine } from '../../../lib/engine/index.js';

/** What the listener saw of each request before the app ran, and what the app answered. */
async function serve(bindFirst: boolean): Promise<{ seen: { request: boolean; response: boolean; node: boolean }[]; bodies: string[] }> {
  const app = express();
  app.get('/who', (req, res) => {
    res.json({ path: req.path, ip: typeof req.ip });
  });
  const prototypes = appPrototypes();
  if (bindFirst) prototypes.bind(app);
  const seen: { request: boolean; response: boolean; node: boolean }[] = [];
  const listener = await listenEngine((req, res) => {
    seen.push({
      request: Object.getPrototypeOf(req) === app.request,
      response: Object.getPrototypeOf(res) === app.response,
      node: req instanceof IncomingMessage && res instanceof ServerResponse,
    });
    app(req, res);
  }, { port: 0, insecure: true, serverOptions: prototypes.serverOptions });
  const url = listener.url.replace('tcp://', 'http://');
  const bodies: string[] = [];
  try {
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${url}/who`);
      expect(res.status).toBe(200);
      bodies.push(await res.text());
      // Bound after the server listens, as the demo binds its app once the port is known.
      if (i === 0 && !bindFirst) prototypes.bind(app);
    }
  } finally {
    await listener.close();
  }
  return { seen, bodies };
}

describe('appPrototypes: requests and responses are born with the bound Express app\'s prototypes', () => {
  test('once bound, each request and response has the app\'s prototypes before the app runs, and is still Node\'s', async () => {
    const { seen, bodies } = await serve(true);
    expect(seen).toEqual(Array(3).fill({ request: true, response: true, node: true }));
    expect(bodies).toEqual(Array(3).fill('{"path":"/who","ip":"string"}'));
  });
  test('bound after the server listens: Node\'s own prototypes until then, the app\'s after', async () => {
    const { seen, bodies } = await serve(false);
    expect(seen).toEqual([
      { request: false, response: false, node: true },
      { request: true, response: true, node: true },
      { request: true, response: true, node: true },
    ]);
    expect(bodies).toEqual(Array(3).fill('{"path":"/who","ip":"string"}'));
  });
  test('bind refuses what is not an Express app', () => {
    expect(() => appPrototypes().bind({ request: {}, response: {} })).toThrow(/needs an Express app/);
  });
});

describe('listenEngine takes IncomingMessage and ServerResponse in serverOptions, and nothing else', () => {
  test('another server option is refused, naming it', async () => {
    await expect(listenEngine(() => undefined, { port: 0, insecure: true, serverOptions: { keepAliveTimeout: 5 } as never })).rejects.toThrow(/"serverOptions" takes IncomingMessage and ServerResponse only, not "keepAliveTimeout"/);
  });
  test('a class that is not a constructor is refused', async () => {
    await expect(listenEngine(() => undefined, { port: 0, insecure: true, serverOptions: { IncomingMessage: 'x' as never } })).rejects.toThrow(/"serverOptions.IncomingMessage" must be a constructor/);
  });
});
