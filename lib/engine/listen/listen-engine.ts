import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { connect, type Socket } from 'node:net';
import { chmod, link, lstat, mkdtemp, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { handleEngineUpgrades } from './handle-upgrades.js';
import { checkTcpCallerPolicy, guardTcpApp, type TcpCallerPolicy } from './tcp-caller-policy.js';
import { EngineListenError } from './listen-error.js';

/**
 * Where {@link listenEngine} serves. Give `socket`, or `port` (with `host`) and one caller
 * policy (`bearer`, `allow` or `insecure: true`; see {@link TcpCallerPolicy}).
 */
export interface ListenEngineOptions extends TcpCallerPolicy {
  /** Unix socket path, as dockerd's `/var/run/docker.sock`. */
  socket?: string;
  /** Permission bits of the socket file. Defaults to `0o660` (owner and group, as dockerd's socket). */
  mode?: number;
  /** TCP port (0 picks a free one). */
  port?: number;
  /** TCP address. Defaults to `127.0.0.1`: the engine API is not for the open network. */
  host?: string;
  /**
   * The request and response classes Node's server makes, as `http.createServer` takes them:
   * {@link appPrototypes}' `serverOptions`, so that they are born with an Express app's prototypes.
   */
  serverOptions?: Pick<ServerOptions, 'IncomingMessage' | 'ServerResponse'>;
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
 * still answers is an error, never stolen. The socket appears at its path with `mode` already
 * set: there is no moment when it can be reached with a wider mode.
 *
 * Over TCP it refuses to start without a caller policy, and answers a `Host` header that is not
 * a loopback name, an IP address or one of `allowedHosts` with 403 `{"message"}` (DNS rebinding).
 *
 * @example
 * const { url, close } = await listenEngine(app, { socket: '/tmp/dockgate.sock' });
 * // DOCKER_HOST=unix:///tmp/dockgate.sock docker ps
 * await listenEngine(app, { port: 2375, bearer: bearerGuard({ realm, keys: tokens, writeError: writeEngineAuthError })('engine:api:read') });
 */
export async function listenEngine(app: RequestListener, options: ListenEngineOptions): Promise<EngineListener> {
  const { socket, port, host = '127.0.0.1', mode = 0o660 } = options ?? {};
  if ((socket === undefined) === (port === undefined)) throw new TypeError('listenEngine needs exactly one of the options "socket" or "port"');
  if (socket !== undefined && (typeof socket !== 'string' || socket === '')) throw new TypeError('listenEngine option "socket" must be a path');
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new TypeError('listenEngine option "port" must be 0-65535');
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new TypeError('listenEngine option "mode" must be permission bits such as 0o660');
  const policyProblem = checkTcpCallerPolicy(options, port !== undefined);
  if (policyProblem) throw new TypeError(policyProblem);
  const served = port !== undefined ? guardTcpApp(app, options) : app;

  const server = createServer(serverOptionsOf(options.serverOptions), served);
  handleEngineUpgrades(server, served);
  // Upgraded (attach) connections leave the HTTP layer, so closeAllConnections() misses them.
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  if (socket !== undefined) await clearStaleSocket(socket);
  // The Unix socket is bound under a private name, and linked to its path once it has its mode.
  const bound = socket !== undefined ? await privateSocketName(socket) : undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (bound !== undefined) server.listen(bound.name, done);
    else server.listen(port, host, done);
  }).catch(async (error: unknown) => {
    await bound?.remove();
    throw error;
  });
  let url: string;
  if (socket !== undefined) {
    await publishSocket(server, bound!, socket, mode);
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

/** The two classes of `serverOptions`, checked: anything else there is refused, not passed on unread. */
function serverOptionsOf(given: ListenEngineOptions['serverOptions']): ServerOptions {
  if (given === undefined) return {};
  for (const key of Object.keys(given)) {
    if (key !== 'IncomingMessage' && key !== 'ServerResponse') throw new TypeError(`listenEngine option "serverOptions" takes IncomingMessage and ServerResponse only, not "${key}"`);
    if (typeof given[key] !== 'function') throw new TypeError(`listenEngine option "serverOptions.${key}" must be a constructor`);
  }
  return { ...given };
}

/** A name to bind in a fresh 0700 directory beside `path`, where no one else can reach the socket. */
async function privateSocketName(path: string): Promise<{ name: string; remove(): Promise<void> }> {
  // Short names: a Unix socket path is limited to 107 bytes.
  const dir = await mkdtemp(join(dirname(path), '.dg'));
  const name = join(dir, 's');
  return {
    name,
    remove: async () => {
      await unlink(name).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
    },
  };
}

/**
 * bind(2) makes a socket file with the process umask's mode, so the socket is made where only
 * this process can reach it, given `mode` there, and only then hard-linked to `path`: link(2) is
 * atomic (the socket never exists at `path` with another mode) and fails rather than replace a
 * file that appeared meanwhile. The private name goes either way.
 */
async function publishSocket(server: Server, bound: { name: string; remove(): Promise<void> }, path: string, mode: number): Promise<void> {
  try {
    await chmod(bound.name, mode);
    await link(bound.name, path);
  } catch (error) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`listenEngine: ${path} appeared while binding; refusing to replace it`);
    throw error;
  } finally {
    await bound.remove();
  }
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
