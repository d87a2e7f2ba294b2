import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the kernel picks it for a listener on
 * port 0, which is closed again. For programs that must be told their port up front
 * (docker-registry's `http.addr`); in-process servers should listen on 0 themselves.
 *
 * @example
 * const port = await freePort(); // e.g. 41234
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}
