import type { RequestListener } from 'node:http';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appPrototypes, listenEngine, type EngineListener } from 'dockgate/engine';
import { pino } from 'pino';
import { Counter } from 'prom-client';
import { createDemoApp } from './app.js';
import { banner } from './banner.js';
import { loadOrCreateKey } from './dev-key.js';
import { logDestination } from './log-destination.js';
import { DemoUsageError, help, parseDemoOptions } from './options.js';

/** How long in-flight requests get to finish on Ctrl-C. */
const GRACE_MS = 5000;

// demo/dist/main.js → demo/
const demoDir = dirname(dirname(fileURLToPath(import.meta.url)));

async function main(): Promise<void> {
  let options;
  try {
    options = parseDemoOptions(process.argv.slice(2), demoDir);
  } catch (err) {
    process.stderr.write(`demo: ${(err as Error).message}\n\n${help}`);
    process.exitCode = 2;
    return;
  }
  if (options === 'help') {
    process.stdout.write(help);
    return;
  }
  const key = loadOrCreateKey(options.stateDir, options.key, options.cert);

  // The TCP side serves the token service, /v2/ and /engine. listenEngine gives it what the engine
  // socket has too: HTTP upgrades (attach) and a graceful close that also ends upgraded sockets.
  // The app is bound once the port is known, since the realm in it names the port.
  // insecure: the listener admits every caller because the app checks them itself: the token
  // service and /v2/'s challenge are public by protocol, and every /engine route sits behind
  // requireBearer (createDemoApp). The Host check still refuses rebound DNS names.
  // Requests and responses are born with the app's prototypes once it is bound (appPrototypes:
  // Express's per-request setPrototypeOf gave each one a shape of its own, a quarter of the CPU).
  let app: RequestListener | undefined;
  const tcpPrototypes = appPrototypes();
  const tcp = await listenEngine((req, res) => {
    if (app) app(req, res);
    else res.writeHead(503).end();
  }, { port: options.port, host: options.host, insecure: true, serverOptions: tcpPrototypes.serverOptions });
  const address = tcp.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const publicUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;

  // JSON lines on stdout, written off the event loop with a bounded buffer (log-destination.ts);
  // the banner goes there too, before them.
  const logs = logDestination();
  const logger = pino({ level: options.logLevel, base: { name: 'dockgate-demo' } }, logs.stream);
  const demo = createDemoApp(options, key, publicUrl, { logger });
  new Counter({
    name: 'dockgate_demo_log_lines_dropped_total',
    help: 'Log lines dropped because stdout did not keep up and the log buffer was full',
    registers: [demo.registry],
    collect() {
      this.reset();
      this.inc(logs.dropped());
    },
  });
  tcpPrototypes.bind(demo.app);
  app = demo.app;
  let engine: EngineListener;
  try {
    const socketPrototypes = appPrototypes();
    socketPrototypes.bind(demo.engineApp);
    engine = await listenEngine(demo.engineApp, { socket: options.engineSocket, mode: 0o660, serverOptions: socketPrototypes.serverOptions });
  } catch (err) {
    await tcp.close();
    throw err;
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stdout.write(`\n${signal} again: stopping now\n`);
      process.exit(130);
    }
    stopping = true;
    process.stdout.write(`\n${signal}: finishing in-flight requests (Ctrl-C again to force), removing ${options.engineSocket}\n`);
    // Finish what is in flight, then go; a stuck stream (docker logs -f) gets GRACE_MS.
    Promise.all([tcp.close({ graceMs: GRACE_MS }), engine.close({ graceMs: GRACE_MS })])
      // The runtime last: its containers are stopped and their records and logs flushed to --state-dir.
      .then(() => Promise.all([demo.redisStore?.close(), demo.throttleStore?.close(), demo.runtime.close?.()]))
      .then(() => {
        process.stdout.write('stopped\n');
        process.exit(0);
      }, (err: unknown) => {
        process.stderr.write(`demo: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Printed last: whoever reads "Ctrl-C stops the demo." may send SIGINT at once.
  process.stdout.write(banner(options, publicUrl, engine.url, key.certPath, key.created));
}

main().catch((err: unknown) => {
  const e = err as Error & { code?: string };
  process.stderr.write(`demo: ${e.code ? `${e.code}: ` : ''}${e.message}\n`);
  if (e instanceof DemoUsageError) process.exitCode = 2;
  else process.exitCode = 1;
});
