import type { Request, Response } from 'express';
import type { Socket } from 'node:net';
import type { AttachSession } from '../../../engine-api/runtime-types.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { DEFAULT_DETACH_KEYS, DetachWatcher, detachKeyBytes } from '../../../engine-api/detach-keys.js';

// The hijacked connection shared by attach and exec start: dockerd's HijackConnection writes the
// status line and headers itself and then the socket carries raw or stdcopy-framed bytes.

/** Whether the request asked for `Upgrade: tcp` (docker CLI, dockerode, docker-py attach/exec). */
export function wantsUpgrade(req: Request): boolean {
  return /\btcp\b/i.test(String(req.headers.upgrade ?? ''));
}

/** Takes the connection over from the HTTP layer, writing the status line and headers by hand. */
export function hijack(req: Request, res: Response, upgrade: boolean, contentType: string): Socket {
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

/**
 * Output to the socket; socket bytes to stdin when the connection is full duplex. With `detach`
 * (a TTY session's detach key bytes) the input is watched for them: once typed, the attach ends
 * as dockerd ends it (the hijacked connection closes, the container and its stdin stay), and the
 * keys never reach the container; `detachedNote` is written last (dockerd's words for an exec's).
 */
export function splice(session: AttachSession, socket: Socket, duplex: boolean, detach?: Buffer, detachedNote?: string): void {
  const { stream, stdin } = session;
  stream.pipe(socket, { end: false });
  stream.on('end', () => socket.end());
  stream.on('error', () => socket.destroy());
  socket.on('close', () => stream.destroy());
  socket.on('error', () => stream.destroy());
  if (duplex && stdin) {
    const watcher = detach && detach.length > 0 ? new DetachWatcher(detach) : undefined;
    let detached = false;
    const end = (): void => {
      stream.unpipe(socket);
      stream.destroy();
      if (detachedNote) socket.end(detachedNote);
      else socket.end();
    };
    socket.on('data', (chunk: Buffer) => {
      if (detached) return;
      let data = chunk;
      if (watcher) {
        const seen = watcher.push(chunk);
        data = seen.data;
        detached = seen.detached;
      }
      if (data.length > 0 && !stdin.write(data) && !detached) {
        socket.pause();
        stdin.once('drain', () => socket.resume());
      }
      if (detached) end();
    });
    socket.on('end', () => {
      if (detached) return;
      if (session.keepStdinOpen) end();
      else stdin.end();
    });
    socket.resume();
  }
}

/** The detach key bytes of a session: only a TTY one has them (dockerd's escape proxy is for TTYs), from `keys` or dockerd's default. */
export function detachKeysOf(session: AttachSession, keys: string | undefined): Buffer | undefined {
  if (session.multiplexed) return undefined;
  return detachKeyBytes(keys !== undefined && keys !== '' ? keys : session.detachKeys || DEFAULT_DETACH_KEYS);
}

/** True when the request came through the server's `upgrade` event (its body is still on the socket). */
export function isUpgradeEvent(req: Request): boolean {
  return (req as unknown as { upgrade?: boolean }).upgrade === true;
}

/**
 * The body of a request that came through the `upgrade` event: Node's parser stops at the
 * headers, so its `Content-Length` bytes (the exec start JSON the Docker CLI and dockerode send
 * with `Upgrade: tcp`) are read off the socket, and anything after them is left there for stdin.
 */
export async function readUpgradeBody(req: Request, maxBytes: number): Promise<Buffer> {
  const length = Number(req.headers['content-length'] ?? 0);
  if (!Number.isInteger(length) || length < 0) throw EngineError.invalidParameter('invalid Content-Length');
  if (length > maxBytes) throw EngineError.invalidParameter(`request body is larger than ${maxBytes} bytes`);
  if (length === 0) return Buffer.alloc(0);
  const socket = req.socket;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onEnd);
    };
    const onEnd = (): void => {
      cleanup();
      reject(EngineError.invalidParameter('request body was not received in full'));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size < length) return;
      cleanup();
      socket.pause();
      const all = Buffer.concat(chunks);
      if (all.length > length) socket.unshift(all.subarray(length));
      resolve(all.subarray(0, length));
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onEnd);
    socket.resume();
  });
}

function canonical(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
