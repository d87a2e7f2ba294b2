import type { Request, Response, Router } from 'express';
import type { Socket } from 'node:net';
import { engineRoute, type EngineContext } from './context.js';
import { boolValue } from '../http/query.js';
import { streamContentType } from '../http/output-response.js';
import type { AttachSession } from '../runtime/types.js';

/**
 * `POST /containers/{id}/attach`. With `Upgrade: tcp` (what `docker run` and dockerode send)
 * the answer is `101 UPGRADED` and the connection becomes the raw stream: output out,
 * stdin in. Full duplex needs the server's `upgrade` event routed into the app
 * (`listenEngine` / `handleEngineUpgrades` do it); on a plain request the output still
 * flows, but stdin is not read. Without `Upgrade`, dockerd answers 200 and streams on the same
 * connection until it closes; so does this route.
 */
export function registerAttachRoute(api: Router, ctx: EngineContext): void {
  api.post(
    '/containers/:id/attach',
    engineRoute(ctx, async (req, res, version) => {
      const session = await ctx.runtime.attach(req.params.id as string, {
        stdin: boolValue(req.query.stdin),
        stdout: boolValue(req.query.stdout),
        stderr: boolValue(req.query.stderr),
        logs: boolValue(req.query.logs),
        stream: boolValue(req.query.stream),
      });
      const upgrade = /\btcp\b/i.test(String(req.headers.upgrade ?? ''));
      const socket = hijack(req, res, upgrade, streamContentType(session, version) ?? 'application/vnd.docker.raw-stream');
      splice(session, socket, (req as unknown as { upgrade?: boolean }).upgrade === true);
    }),
  );
}

/** Takes the connection over from the HTTP layer, writing the status line and headers by hand. */
function hijack(req: Request, res: Response, upgrade: boolean, contentType: string): Socket {
  const socket = (res.socket ?? req.socket) as Socket;
  const lines = [upgrade ? 'HTTP/1.1 101 UPGRADED' : 'HTTP/1.1 200 OK', `Content-Type: ${contentType}`];
  if (upgrade) lines.push('Connection: Upgrade', 'Upgrade: tcp');
  else lines.push('Connection: close');
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (name === 'content-type' || value === undefined) continue;
    lines.push(`${canonical(name)}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  }
  // The response object must never write again on this socket.
  res.detachSocket?.(socket);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  return socket;
}

function splice(session: AttachSession, socket: Socket, duplex: boolean): void {
  const { stream, stdin } = session;
  stream.pipe(socket, { end: false });
  stream.on('end', () => socket.end());
  stream.on('error', () => socket.destroy());
  socket.on('close', () => stream.destroy());
  socket.on('error', () => stream.destroy());
  if (duplex && stdin) {
    socket.on('data', (chunk: Buffer) => {
      if (!stdin.write(chunk)) {
        socket.pause();
        stdin.once('drain', () => socket.resume());
      }
    });
    socket.on('end', () => stdin.end());
    socket.resume();
  }
}

function canonical(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
