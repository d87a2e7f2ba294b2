import { createServer } from 'node:http';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { handleEngineUpgrades, listenEngine, type EngineListener } from 'dockgate';
import { createDemoApp } from './app.js';
import { banner } from './banner.js';
import { loadOrCreateKey } from './dev-key.js';
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

  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const publicUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;

  const demo = createDemoApp(options, key, publicUrl);
  server.on('request', demo.app);
  handleEngineUpgrades(server, demo.app);
  let engine: EngineListener;
  try {
    engine = await listenEngine(demo.engineApp, { socket: options.engineSocket, mode: 0o660 });
  } catch (err) {
    server.close();
    throw err;
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: finishing in-flight requests, removing ${options.engineSocket}\n`);
    // Finish what is in flight, then go; a stuck stream (docker logs -f) gets 5 s.
    const force = setTimeout(() => server.closeAllConnections(), GRACE_MS);
    force.unref();
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    idle.unref();
    Promise.all([
      new Promise<void>((resolve) => server.close(() => resolve())),
      engine.close({ graceMs: GRACE_MS }),
    ]).then(() => demo.redisStore?.close()).then(() => {
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
