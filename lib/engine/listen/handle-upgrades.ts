import { ServerResponse, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Routes HTTP upgrade requests (`Upgrade: tcp` on `POST /containers/{id}/attach`, sent by
 * `docker run` and dockerode) through the Express app, so they pass the same middleware (auth,
 * version gate) as any request. Node hands upgrades to the `upgrade` event with the socket
 * already detached from the HTTP parser, which is what a full-duplex attach needs. A route that
 * answers normally (an error, say) gets its response written and the connection closed.
 *
 * @example
 * const server = http.createServer(app);
 * handleEngineUpgrades(server, app);
 */
export function handleEngineUpgrades(server: Server, app: RequestListener): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (head.length > 0) socket.unshift(head);
    const res = new ServerResponse(req);
    res.assignSocket(socket as never);
    res.on('finish', () => {
      res.detachSocket(socket as never);
      // Nothing reads this socket any more: without resume() bytes the route left unread (the
      // body of an upgrade sent to create) stay buffered, 'end' never fires and the connection
      // outlives the client. Reading on lets the client's FIN close it.
      socket.resume();
      socket.end();
    });
    socket.on('error', () => socket.destroy());
    app(req, res);
  });
}
