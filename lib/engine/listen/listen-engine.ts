import { createServer, type RequestListener, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { chmod, lstat, unlink } from 'node:fs/promises';
import { handleEngineUpgrades } from './handle-upgrades.js';
import { EngineListenError } from './listen-error.js';

/** Where {@link listenEngine} serves. Give `socket`, or `port` (with `host`). */
export interface ListenEngineOptions {
  /** Unix socket path, as dockerd's `/var/run/docker.sock`. */
  socket?: string;
  /** Permission bits of the socket file. Defaults to `0o660` (owner and group, as dockerd's socket). */
  mode?: number;
  /** TCP port (0 picks a free one). */
  port?: number;
  /** TCP address. Defaults to `127.0.0.1`: the engine API is not for the open network. */
  host?: string;
}

/** A listening engine server. */
export interface EngineListener {
  server: Server;
  /** `unix:///path` or `tcp://host:port`, ready for DOCKER_HOST. */
  url: string;
  /**
   * Stops listening and removes the socket file. Open connections are dropped at once, or,
   * with `graceMs`, given that long to finish what they are doing (idle keep-alive connections
   * are closed straight away).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Serves an app holding `engineRouter` on a Unix socket or TCP, with HTTP upgrades wired
 * (see `handleEngineUpgrades`). A socket file left by a dead process is removed; one that
 * still answers is an error, never stolen. The new socket gets `mode`.
 *
 * @example
 * const { url, close } = await listenEngine(app, { socket: '/tmp/dockgate.sock' });
 * // DOCKER_HOST=unix:///tmp/dockgate.sock docker ps
 */
export async function listenEngine(app: RequestListener, options: ListenEngineOptions): Promise<EngineListener> {
  const { socket, port, host = '127.0.0.1', mode = 0o660 } = options ?? {};
  if ((socket === undefined) === (port === undefined)) throw new TypeError('listenEngine needs exactly one of the options "socket" or "port"');
  if (socket !== undefined && (typeof socket !== 'string' || socket === '')) throw new TypeError('listenEngine option "socket" must be a path');
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new TypeError('listenEngine option "port" must be 0-65535');
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new TypeError('listenEngine option "mode" must be permission bits such as 0o660');

  const server = createServer(app);
  handleEngineUpgrades(server, app);
  // Upgraded (attach) connections leave the HTTP layer, so closeAllConnections() misses them.
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  if (socket !== undefined) await clearStaleSocket(socket);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (socket !== undefined) server.listen(socket, done);
    else server.listen(port, host, done);
  });
  let url: string;
  if (socket !== undefined) {
    await chmod(socket, mode);
    url = `unix://${socket}`;
  } else {
    const address = server.address();
    url = typeof address === 'object' && address ? `tcp://${address.address}:${address.port}` : `tcp://${host}:${port}`;
  }
  return {
    server,
    url,
    close: async ({ graceMs = 0 } = {}) => {
      if (!Number.isFinite(graceMs) || graceMs < 0) throw new TypeError('close option "graceMs" must be a non-negative number');
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const drop = (): void => {
          server.closeAllConnections();
          for (const s of sockets) s.destroy();
        };
        if (graceMs === 0) {
          drop();
          return;
        }
        // A connection whose request finishes goes back to keep-alive idle: close those as
        // they appear, so the grace period ends with the last in-flight request.
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        const timer = setTimeout(drop, graceMs);
        server.once('close', () => {
          clearInterval(idle);
          clearTimeout(timer);
        });
      });
      if (socket !== undefined) await unlink(socket).catch(() => undefined);
    },
  };
}

async function clearStaleSocket(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => undefined);
  if (!stat) return;
  if (!stat.isSocket()) throw new EngineListenError(`listenEngine: ${path} exists and is not a socket; refusing to replace it`);
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) throw new EngineListenError(`listenEngine: ${path} is in use by a running server`);
  await unlink(path);
}
