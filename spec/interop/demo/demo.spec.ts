/**
 * The demo as a newcomer meets it: started as a process (`node demo/dist/main.js`, which
 * `npm test`'s pretest builds), its printed commands run as printed.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerd, describeWithPeers, program, redis } from '../../support/peers.js';
import { dockerCli, runProgram, startRegistry, type DockerCli, type RunningRegistry } from '../support/index.js';

const MAIN = join(process.cwd(), 'demo/dist/main.js');

interface RunningDemo {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startDemo(args: string[]): Promise<RunningDemo> {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start:\n${out}`)), 15_000);
    const check = () => {
      if (out.includes('Ctrl-C stops the demo.')) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`demo exited:\n${out}`)); });
  });
}

/** One request to the engine API on its Unix socket. */
function engineCall(socketPath: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest({ socketPath, method, path, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      // 'close' also covers a stream the server cut off (no 'end' then).
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The line after a heading of the banner, trimmed. */
function lineAfter(text: string, heading: string, offset = 1): string {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.startsWith(heading));
  if (i < 0) throw new Error(`no "${heading}" in:\n${text}`);
  return (lines[i + offset] as string).trim();
}

describeWithPeers('the demo, started as a process, does what its banner says', [
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) },
  program('curl', ['--version']), dockerd(), program('docker-registry', ['--version']), program('/bin/busybox', ['true']),
], () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-demo-'));
  const socket = join(dir, 'engine.sock');
  const state = join(dir, 'state');
  let demo: RunningDemo;
  let registry: RunningRegistry | undefined;
  let cli: DockerCli;

  beforeAll(async () => {
    demo = await startDemo(['--port', '0', '--engine-socket', socket, '--state-dir', state]);
    cli = await dockerCli();
  });
  afterAll(async () => {
    if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
    await registry?.stop();
    await cli.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('on first start it creates a development key and certificate in the state folder', () => {
    expect(demo.output()).toContain('development key, created now');
    expect(existsSync(join(state, 'key.pem'))).toBe(true);
    expect(existsSync(join(state, 'cert.pem'))).toBe(true);
  });

  test('the printed curl command returns a token', async () => {
    const curl = lineAfter(demo.output(), 'Get a token:');
    expect(curl).toMatch(/^curl -s -u alice:wonderland '/);
    const res = await runProgram('sh', ['-c', curl]);
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body.token).toBe(body.access_token);
    expect(body.expires_in).toBe(300);
  });

  test('the printed token works on the bearer-protected registry route, and no token gets the challenge', async () => {
    const base = /registry routes\s+(\S+)\/v2\//.exec(demo.output())![1] as string;
    const curl = lineAfter(demo.output(), 'Get a token:');
    const token = JSON.parse((await runProgram('sh', ['-c', curl])).stdout).token as string;
    const ok = await fetch(`${base}/v2/alice/hello/tags/list`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ name: 'alice/hello', tags: ['1.0', 'latest'] });
    const undecodable = await fetch(`${base}/v2/alice%ZZ/tags/list`);
    expect(undecodable.status).toBe(400);
    expect(await undecodable.json()).toEqual({ errors: [{ code: 'NAME_INVALID', message: 'invalid repository name' }] });
    const denied = await fetch(`${base}/v2/alice/hello/tags/list`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toBe(`Bearer realm="${base}/token",service="registry.local",scope="repository:alice/hello:pull"`);
  });

  test('the printed registry block makes a registry 2.8 trust the demo: docker login succeeds', async () => {
    const text = demo.output();
    const value = (key: string) => JSON.parse(new RegExp(`^\\s+${key}: (".*")$`, 'm').exec(text)![1] as string) as string;
    registry = await startRegistry({
      realm: value('realm'), service: value('service'), issuer: value('issuer'), certPem: readFileSync(value('rootcertbundle'), 'utf8'),
    });
    const login = await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'wonderland' });
    expect(login.stderr + login.stdout).toContain('Login Succeeded');
    const wrong = await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'nope' });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('invalid username or password');
  });

  test('the printed DOCKER_HOST line makes docker run --rm busybox echo hello work', async () => {
    const exportLine = lineAfter(demo.output(), 'Run a container through the engine API:');
    const host = /^export DOCKER_HOST=(\S+)$/.exec(exportLine)![1] as string;
    expect(host).toBe(`unix://${socket}`);
    const run = await cli.docker(['run', '--rm', 'busybox', 'echo', 'hello'], { env: { DOCKER_HOST: host } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('hello\n');
  });

  test('the TCP engine API needs a token, and answers in the engine error shape', async () => {
    const base = /registry routes\s+(\S+)\/v2\//.exec(demo.output())![1] as string;
    const res = await fetch(`${base}/engine/v1.28/containers/json`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('scope="engine:api:read"');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ message: 'authentication required' });
    const token = ((await (await fetch(`${base}/token?service=registry.local&scope=engine:api:read`, {
      headers: { authorization: `Basic ${Buffer.from('bob:builder').toString('base64')}` },
    })).json()) as { token: string }).token;
    const ok = await fetch(`${base}/engine/v1.28/containers/json`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('api-version')).toBe('1.28');
  });

  test('Ctrl-C shuts it down cleanly: an in-flight request finishes, exit 0, the socket file removed', async () => {
    const created = await engineCall(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: ['sleep', '1'] });
    const id = (JSON.parse(created.body) as { Id: string }).Id;
    expect((await engineCall(socket, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
    const waiting = engineCall(socket, 'POST', `/v1.28/containers/${id}/wait`);
    await new Promise((r) => setTimeout(r, 200));
    demo.child.kill('SIGINT');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ StatusCode: 0, Error: null });
    expect(await demo.exited).toBe(0);
    expect(existsSync(socket)).toBe(false);
    expect(demo.output()).toContain('stopped');
  });

  test('a second start reuses the development key; a second Ctrl-C stops at once despite an open stream', async () => {
    const again = await startDemo(['--port', '0', '--engine-socket', socket, '--state-dir', state]);
    expect(again.output()).not.toContain('created now');
    // An events stream never ends by itself: the first Ctrl-C waits for it (grace period).
    const events = engineCall(socket, 'GET', '/v1.28/events').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    again.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    expect(again.child.exitCode).toBeNull();
    const began = Date.now();
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(130);
    expect(Date.now() - began).toBeLessThan(2000);
    await events;
  });
});

describeWithPeers('the demo with --redis keeps refresh tokens in Redis', [
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) }, redis(),
], () => {
  test('a refresh token from docker login is stored hashed under the dockgate prefix, and works after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-demo-redis-'));
    const args = ['--port', '0', '--engine-socket', join(dir, 'e.sock'), '--state-dir', join(dir, 'state'), '--redis', 'redis://127.0.0.1:6379'];
    try {
      const first = await startDemo(args);
      expect(first.output()).toContain('refresh tokens   Redis (redis://127.0.0.1:6379)');
      const base = /registry routes\s+(\S+)\/v2\//.exec(first.output())![1] as string;
      const login = await (await fetch(`${base}/token?service=registry.local&offline_token=true&client_id=docker`, {
        headers: { authorization: `Basic ${Buffer.from('alice:wonderland').toString('base64')}` },
      })).json() as { refresh_token: string };
      const id = createHash('sha256').update(login.refresh_token).digest('hex');
      // Under its bucket's hash tag: dockgate:rt:{tag}:token:<sha256>.
      const [key, ...others] = (await runProgram('redis-cli', ['--scan', '--pattern', `dockgate:rt:{*}:token:${id}`])).stdout.trim().split('\n');
      expect(others).toEqual([]);
      expect(key).toMatch(new RegExp(`^dockgate:rt:\\{[0-9a-z]+\\}:token:${id}$`));
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(0);
      const second = await startDemo(args);
      const base2 = /registry routes\s+(\S+)\/v2\//.exec(second.output())![1] as string;
      const refreshed = await fetch(`${base2}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: login.refresh_token, service: 'registry.local', client_id: 'docker', scope: 'repository:alice/hello:pull' }),
      });
      expect(refreshed.status).toBe(200);
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
      await runProgram('redis-cli', ['del', key as string, (key as string).replace(/:token:.*$/, ':subject:alice')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
