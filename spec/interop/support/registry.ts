import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Options of {@link startRegistry}. */
export interface RegistryOptions {
  /** `auth.token.service`: must equal the token's `aud`. */
  service: string;
  /** `auth.token.issuer`: must equal the token's `iss`. */
  issuer: string;
  /** `auth.token.realm`: the token endpoint's URL. */
  realm: string;
  /** PEM certificate(s) written as `auth.token.rootcertbundle`. */
  certPem: string;
  /** Blob and manifest storage directory. Defaults to a directory inside the registry's temporary directory. */
  storageDir?: string;
  /** The registry program. Defaults to `docker-registry` (Debian's name for distribution 2.8). */
  command?: string;
  /** Milliseconds to wait for `/v2/` to answer. Defaults to 15000. */
  startTimeoutMs?: number;
}

/** A running registry. */
export interface RunningRegistry {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `127.0.0.1:PORT`, the registry part of image references. */
  readonly host: string;
  readonly storageDir: string;
  /** The last lines the registry wrote, for failure messages. */
  logs(): string;
  /** Stops the process and removes its temporary directory. */
  stop(): Promise<void>;
}

function configYaml(options: RegistryOptions, port: number, storageDir: string, certFile: string): string {
  // JSON strings are valid YAML scalars, which keeps paths and names safely quoted.
  const q = (value: string) => JSON.stringify(value);
  return [
    'version: 0.1',
    'log: { level: warn, accesslog: { disabled: true } }',
    `storage: { filesystem: { rootdirectory: ${q(storageDir)} } }`,
    `http: { addr: ${q(`127.0.0.1:${port}`)}, secret: dockgate-interop }`,
    'health: { storagedriver: { enabled: false } }',
    'auth:',
    '  token:',
    `    realm: ${q(options.realm)}`,
    `    service: ${q(options.service)}`,
    `    issuer: ${q(options.issuer)}`,
    `    rootcertbundle: ${q(certFile)}`,
    '',
  ].join('\n');
}

/** Resolves with the status of `GET /v2/`, or undefined when nothing answers yet. */
function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(`${url}/v2/`, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited(child);
  clearTimeout(timer);
}

/**
 * Starts a real registry (distribution 2.8, `docker-registry serve CONFIG`) on a free 127.0.0.1
 * port, trusting tokens of `issuer` for `service` signed by the key of `certPem`, and waits until
 * `/v2/` answers. Docker treats 127.0.0.0/8 registries as insecure, so plain HTTP is enough.
 *
 * @example
 * const registry = await startRegistry({ service: 'registry.test', issuer: 'dockgate', realm: `${token.url}/token`, certPem });
 * // docker push ${registry.host}/alice/app:1
 * await registry.stop();
 */
export async function startRegistry(options: RegistryOptions): Promise<RunningRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'dockgate-registry-'));
  const certFile = join(dir, 'rootcert.pem');
  const storageDir = options.storageDir ?? join(dir, 'data');
  await mkdir(storageDir, { recursive: true });
  await writeFile(certFile, options.certPem);
  const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
  let lastError = '';
  // A port found free can be taken before the registry binds it: try again with another.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    const configFile = join(dir, 'config.yml');
    await writeFile(configFile, configYaml(options, port, storageDir, certFile));
    const lines: string[] = [];
    const child = spawn(options.command ?? 'docker-registry', ['serve', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      lines.splice(0, Math.max(0, lines.length - 50));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', (err) => lines.push(String(err)));
    const url = `http://127.0.0.1:${port}`;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if ((await probe(url)) !== undefined) {
        return {
          url,
          host: `127.0.0.1:${port}`,
          storageDir,
          logs: () => lines.join('\n'),
          stop: async () => {
            await stopProcess(child);
            await rm(dir, { recursive: true, force: true });
          },
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopProcess(child);
    lastError = lines.join('\n');
    if (Date.now() >= deadline) break;
  }
  await rm(dir, { recursive: true, force: true });
  throw new Error(`docker-registry did not answer on /v2/:\n${lastError}`);
}
