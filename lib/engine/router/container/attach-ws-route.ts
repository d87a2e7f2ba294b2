import type { Request, Response, Router } from 'express';
import type { Socket } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { engineRoute, type EngineContext } from '../http/context.js';
import { attachQuery } from './attach-query.js';
import { detachKeysOf, isUpgradeEvent } from '../http/hijack.js';
import { DetachWatcher } from '../../../engine-api/detach-keys.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { FrameDecoder } from '../../../engine-api/stdcopy.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import type { AttachSession } from '../../../engine-api/output-stream.js';

/** Output held for a slow websocket client before the container's output is paused. */
const MAX_BUFFERED = 1024 * 1024;

/**
 * `GET /containers/{id}/attach/ws`: attach over a WebSocket, as dockerd offers it to browsers
 * and its SDKs. The `ws` package does the handshake and framing (RFC 6455 has enough edge cases
 * — masking, fragmentation, close codes — that a hand-written one would be a liability).
 * Output goes out raw, never stdcopy-framed (dockerd's websocket attach does not multiplex), one
 * binary frame per chunk from API 1.28 (text frames before, as dockerd sends them); every
 * message the client sends is stdin. The query is the attach's: `stream`, `stdin`, `stdout`,
 * `stderr`, `logs`, and `detachKeys` for a TTY (ctrl-p ctrl-q by default). The socket closes
 * (1000) when the output ends. It needs the server's `upgrade` event routed into the app
 * (`listenEngine` / `handleEngineUpgrades`); a request that did not come that way is a 400.
 */
export function registerAttachWsRoute(api: Router, ctx: EngineContext): void {
  const server = new WebSocketServer({ noServer: true, maxPayload: ctx.settings.maxBodyBytes });
  api.get(
    '/containers/:id/attach/ws',
    engineRoute(ctx, 'container.attach.ws', async (req, res, version) => {
      if (!isUpgradeEvent(req) || !/\bwebsocket\b/i.test(String(req.headers.upgrade ?? ''))) {
        throw EngineError.invalidParameter('attach/ws needs a WebSocket upgrade (Upgrade: websocket) through the server\'s upgrade event (listenEngine or handleEngineUpgrades)');
      }
      const { options, detachKeys: keys } = attachQuery(req);
      const session = await ctx.runtime.attach(req.params.id as string, options);
      const detach = detachKeysOf(session, keys);
      const ws = await upgrade(server, req, res);
      relay(session, ws, apiVersionAtLeast(version, '1.28'), detach);
    }),
  );
}

/** Completes the WebSocket handshake on the request's socket, taken back from the response object. */
function upgrade(server: WebSocketServer, req: Request, res: Response): Promise<WebSocket> {
  const socket = req.socket as Socket;
  res.detachSocket?.(socket);
  return new Promise((resolve) => server.handleUpgrade(req, socket, Buffer.alloc(0), resolve));
}

/** Output to the client (raw), client messages to stdin, with dockerd's rules for the ends and the detach keys. */
function relay(session: AttachSession, ws: WebSocket, binary: boolean, detach: Buffer | undefined): void {
  const { stream, stdin } = session;
  const decoder = session.multiplexed ? new FrameDecoder() : undefined;
  const send = (data: Buffer): void => {
    if (data.length === 0 || ws.readyState !== ws.OPEN) return;
    ws.send(data, { binary }, () => {
      if (ws.bufferedAmount < MAX_BUFFERED && stream.isPaused()) stream.resume();
    });
    if (ws.bufferedAmount >= MAX_BUFFERED) stream.pause();
  };
  stream.on('data', (chunk: Buffer) => {
    if (!decoder) return send(chunk);
    for (const frame of decoder.push(chunk)) send(Buffer.from(frame.payload));
  });
  stream.on('end', () => ws.close(1000));
  stream.on('error', () => ws.terminate());
  let detached = false;
  const watcher = detach ? new DetachWatcher(detach) : undefined;
  ws.on('message', (message: RawData) => {
    if (detached || !stdin) return;
    let data: Buffer = Array.isArray(message) ? Buffer.concat(message) : Buffer.from(message as ArrayBuffer);
    if (watcher) {
      const seen = watcher.push(data);
      data = seen.data;
      detached = seen.detached;
    }
    if (data.length > 0) stdin.write(data);
    if (detached) {
      stream.destroy();
      ws.close(1000);
    }
  });
  ws.on('close', () => {
    stream.destroy();
    if (!detached && stdin && !session.keepStdinOpen) stdin.end();
  });
  ws.on('error', () => stream.destroy());
}
