/** A real JWKS endpoint on 127.0.0.1 whose document can be swapped and whose fetches are counted. */
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { JSONWebKeySet } from 'jose';

export interface JwksServer {
  url: string;
  fetches: number;
  jwks: JSONWebKeySet;
  /** When set, the endpoint answers this status instead of the document. */
  failWith?: number;
  close(): Promise<void>;
}

export async function startJwksServer(jwks: JSONWebKeySet): Promise<JwksServer> {
  const app = express();
  const state = { fetches: 0, jwks, failWith: undefined as number | undefined };
  app.get('/jwks', (_req, res) => {
    state.fetches++;
    if (state.failWith) res.status(state.failWith).end();
    else res.json(state.jwks);
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/jwks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as JwksServer;
}
