import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tokenRouter, type AuditEvent, type TokenOptions, type TokenRouter } from '../../../lib/index.js';

/** Options of {@link startTokenServer}: the token router's, with an audit hook added by default. */
export type TokenServerOptions = TokenOptions;

/** A token service listening on 127.0.0.1. */
export interface RunningTokenServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The token endpoint's URL, for the registry's `auth.token.realm`. */
  readonly realm: string;
  readonly router: TokenRouter;
  /** Every audit event so far, in order (the `audit` option, when given, is still called). */
  readonly events: AuditEvent[];
  /** Closes the server, dropping kept-alive client connections (dockerd keeps some). */
  stop(): Promise<void>;
}

/**
 * Listens an Express app serving {@link tokenRouter} on a free 127.0.0.1 port, recording audit
 * events so specs can tell which grant a real client used.
 *
 * @example
 * const token = await startTokenServer({ issuer: 'dockgate', service: 'registry.test', keys, authenticate });
 * token.realm // http://127.0.0.1:PORT/token
 */
export async function startTokenServer(options: TokenServerOptions): Promise<RunningTokenServer> {
  const events: AuditEvent[] = [];
  const router = tokenRouter({
    ...options,
    audit: (event) => {
      events.push(event);
      options.audit?.(event);
    },
  });
  const app = express();
  app.use(router);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const tokenPath = options.tokenPath ?? '/token';
  return {
    url,
    realm: `${url}${tokenPath}`,
    router,
    events,
    stop: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
