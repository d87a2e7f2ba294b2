import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { isLoopbackHost } from '../../http/loopback.js';
import { EngineError } from '../../engine-api/engine-error.js';
import { writeEngineError } from '../errors/write-engine-error.js';

/**
 * Who may call the engine over TCP: exactly one of `bearer`, `allow` and `insecure` is required
 * with `port` (a Unix socket's file mode is its policy). Over TCP anything that reaches the port
 * — another local user, a browser page — can otherwise drive the engine.
 */
export interface TcpCallerPolicy {
  /** An Express middleware run before the app on every request, upgrades included: typically `bearerGuard({...})('engine:api:read')` with `writeError: writeEngineAuthError`. */
  bearer?: RequestHandler;
  /** A host function deciding per request: true lets it through, false answers 403 `{"message"}`. */
  allow?: (req: IncomingMessage) => boolean | Promise<boolean>;
  /** Serve whoever reaches the port, as dockerd's `-H tcp://` without TLS does. Only for an app that checks callers itself. */
  insecure?: boolean;
  /**
   * DNS names the `Host` header may carry besides the loopback names (`localhost`, `*.localhost`).
   * A Host that is an IP address is always accepted: only a DNS name can be rebound. Any other
   * name is answered 403, so a web page whose name was rebound to this machine cannot reach
   * the engine from a browser. Defaults to none.
   */
  allowedHosts?: readonly string[];
}

/** Checks the policy options once; returns a message naming the problem, or undefined. */
export function checkTcpCallerPolicy(policy: TcpCallerPolicy, tcp: boolean): string | undefined {
  const given = (['bearer', 'allow', 'insecure'] as const).filter((name) => policy[name] !== undefined);
  if (!tcp) {
    const extra = [...given, ...(policy.allowedHosts !== undefined ? ['allowedHosts'] : [])];
    return extra.length > 0 ? `listenEngine option "${extra[0]}" is for TCP ("port"); a Unix socket is guarded by its file mode` : undefined;
  }
  if (given.length !== 1) {
    return 'listenEngine over TCP needs exactly one caller policy: "bearer" (a bearerGuard middleware), "allow" (a function of the request) or "insecure: true"';
  }
  if (policy.bearer !== undefined && typeof policy.bearer !== 'function') return 'listenEngine option "bearer" must be an Express middleware such as bearerGuard(...)(scope)';
  if (policy.allow !== undefined && typeof policy.allow !== 'function') return 'listenEngine option "allow" must be a function of the request';
  if (policy.insecure !== undefined && policy.insecure !== true) return 'listenEngine option "insecure" must be true when given';
  const hosts = policy.allowedHosts;
  if (hosts !== undefined && (!Array.isArray(hosts) || hosts.some((h) => typeof h !== 'string' || !/^[a-z0-9.-]+$/i.test(h)))) {
    return 'listenEngine option "allowedHosts" must be a list of DNS names (no port)';
  }
  return undefined;
}

/** The name in a Host header, without port or brackets, lower case; undefined when absent. */
function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const lower = header.trim().toLowerCase();
  const name = lower.startsWith('[') ? lower.slice(1, lower.indexOf(']')) : lower.replace(/:\d*$/, '');
  return name.replace(/\.$/, '');
}

const forbidden = (res: Response, message: string): void => writeEngineError(res, new EngineError('Forbidden', message));

/** An engine error as `{"message"}` with Node's own calls, for the gate that is not an Express app. */
function writePlainError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${JSON.stringify({ message })}\n`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
const writeForbidden = (res: ServerResponse, message: string): void => writePlainError(res, 403, message);
const writeServerError = (res: ServerResponse): void => writePlainError(res, 500, 'internal server error');

/**
 * The app behind the TCP policy: first the `Host` check, then the caller policy, then the app.
 * Errors are the engine API's `{"message"}`.
 *
 * Without a `bearer` middleware the gate is a plain request listener, not an Express app: a
 * second Express app in front of the host's costs every request its own dispatch and a second
 * swap of the request's and response's prototypes (about 12 µs a request, bench:token's demo row).
 */
export function guardTcpApp(app: RequestListener, policy: TcpCallerPolicy): RequestListener {
  const names = new Set((policy.allowedHosts ?? []).map((h) => h.toLowerCase()));
  const hostRefusal = (req: IncomingMessage): string | undefined => {
    const name = hostName(req.headers.host);
    if (name !== undefined && (isIP(name) !== 0 || isLoopbackHost(name) || names.has(name))) return undefined;
    return `Host ${JSON.stringify(req.headers.host ?? '')} is not a name this engine serves (DNS rebinding?); allow it with the "allowedHosts" option`;
  };
  const allow = policy.allow;
  if (!policy.bearer) {
    const refused = 'this caller may not use the engine API';
    // What the Express gate's error handler did: a throw is a 500 without its details.
    const serve = (req: IncomingMessage, res: ServerResponse): void => {
      try {
        app(req, res);
      } catch {
        writeServerError(res);
      }
    };
    return (req, res) => {
      const refusal = hostRefusal(req);
      if (refusal !== undefined) {
        writeForbidden(res, refusal);
        return;
      }
      if (!allow) {
        serve(req, res);
        return;
      }
      Promise.resolve()
        .then(() => allow(req))
        .then((allowed) => (allowed === true ? serve(req, res) : writeForbidden(res, refused)), () => writeServerError(res));
    };
  }
  const gate = express();
  gate.disable('x-powered-by');
  gate.use((req: Request, res: Response, next: NextFunction) => {
    const refusal = hostRefusal(req);
    if (refusal === undefined) {
      next();
      return;
    }
    forbidden(res, refusal);
  });
  gate.use(policy.bearer);
  // Called as a plain listener, not mounted: a host Express app keeps its own settings.
  gate.use((req: Request, res: Response) => app(req, res));
  gate.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => writeEngineError(res, err));
  return gate;
}
