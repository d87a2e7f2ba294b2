import { test, expect, afterAll } from '@jest/globals';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

const hasBusybox = existsSync('/bin/busybox');
const busybox: PeerCheck = { name: '/bin/busybox (busybox-static)', available: () => hasBusybox };
const d = (title: string, body: () => void) => describeWithPeers(title, [busybox], body);
const runtime = processRuntime({ images: { busybox: { program: '/bin/busybox' }, 'alpine:*': { program: '/bin/busybox' } }, maxLogBytes: 64 * 1024 });
const listening = hasBusybox ? listenOnSocket(runtime) : undefined;
afterAll(async () => {
  await runtime.close?.();
  await (await listening)?.close();
});

async function run(cmd: string[], extra: object = {}): Promise<{ id: string; code: number; out: string; err: string; raw: Buffer }> {
  const { socket } = (await listening)!;
  const created = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: cmd, ...extra });
  expect(created.status).toBe(201);
  const id = JSON.parse(created.body.toString()).Id as string;
  expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
  const wait = JSON.parse((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/wait`)).body.toString());
  const logs = await socketRequest(socket, 'GET', `/v1.28/containers/${id}/logs?stdout=1&stderr=1`);
  const frames = new FrameDecoder().push(logs.body);
  const pick = (s: number): string => frames.filter((f) => f.stream === s).map((f) => f.payload.toString()).join('');
  return { id, code: wait.StatusCode, out: pick(1), err: pick(2), raw: logs.body };
}

d('process runtime: Cmd runs as a child process of an allow-listed image', () => {
  test('argv[0] picks the busybox applet; output and exit code come back', async () => {
    const r = await run(['sh', '-c', 'echo out; echo err >&2; exit 4']);
    expect(r).toMatchObject({ code: 4, out: 'out\n', err: 'err\n' });
  });
  test('no shell: arguments are passed verbatim', async () => {
    const r = await run(['echo', '$HOME; ls', '`id`']);
    expect(r.out).toBe('$HOME; ls `id`\n');
  });
  test('the environment holds only the image and request entries', async () => {
    const r = await run(['env'], { Env: ['GREETING=hi'] });
    expect(r.out.split('\n').filter(Boolean).sort()).toEqual(['GREETING=hi', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']);
  });
  test('an image outside the allow-list is 404 No such image', async () => {
    const { socket } = (await listening)!;
    const res = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'debian', Cmd: ['true'] });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString())).toEqual({ message: 'No such image: debian:latest' });
    const tagged = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox:1.36', Cmd: ['true'] });
    expect(tagged.status).toBe(404);
    expect(JSON.parse(tagged.body.toString())).toEqual({ message: 'No such image: busybox:1.36' });
  });
  test('a name:* entry allows every tag of that name, inspected under the tag asked for', async () => {
    const { socket } = (await listening)!;
    const created = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'alpine:3.20', Cmd: ['echo', 'tagged'] });
    expect(created.status).toBe(201);
    const id = JSON.parse(created.body.toString()).Id as string;
    const inspect = JSON.parse((await socketRequest(socket, 'GET', `/v1.28/containers/${id}/json`)).body.toString());
    expect(inspect.Config.Image).toBe('alpine:3.20');
    expect((await run(['echo', 'x'], { Image: 'alpine:edge' })).out).toBe('x\n');
    expect((await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'alpine@sha256:' + 'a'.repeat(64), Cmd: ['true'] })).status).toBe(404);
  });
  test('kept output is bounded by maxLogBytes: 1 MB written, the last <= 64 KiB kept', async () => {
    const r = await run(['sh', '-c', 'head -c 1000000 /dev/zero | tr "\\0" x; echo; echo END']);
    expect(r.code).toBe(0);
    expect(r.out.length).toBeLessThanOrEqual(64 * 1024 + 65536);
    expect(r.out.endsWith('\nEND\n')).toBe(true);
  });
  test('a follower attached before start receives all 1 MB (the child waits for it)', async () => {
    const { socket } = (await listening)!;
    const created = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: ['head', '-c', '1000000', '/dev/zero'] });
    const id = JSON.parse(created.body.toString()).Id as string;
    // follow=1 sends its headers once the reader is registered: start only then.
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest({ socketPath: socket, path: `/v1.28/containers/${id}/logs?stdout=1&follow=1` }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        void socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`);
      });
      req.on('error', reject);
      req.end();
    });
    const total = new FrameDecoder().push(body).reduce((n, f) => n + f.payload.length, 0);
    expect(total).toBe(1000000);
  });
  test('stdin reaches an OpenStdin container over an upgraded attach', async () => {
    const { socket } = (await listening)!;
    const created = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: ['cat'], OpenStdin: true, StdinOnce: true });
    const id = JSON.parse(created.body.toString()).Id as string;
    const wire = await new Promise<Buffer>((resolve, reject) => {
      const conn = connect(socket);
      const chunks: Buffer[] = [];
      conn.on('data', (c) => {
        chunks.push(c);
        if (Buffer.concat(chunks).includes('101 UPGRADED') && chunks.length === 1) {
          void socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`).then(() => conn.end('piped in\n'));
        }
      });
      conn.on('close', () => resolve(Buffer.concat(chunks)));
      conn.on('error', reject);
      conn.write(`POST /v1.28/containers/${id}/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n`);
    });
    const body = wire.subarray(wire.indexOf('\r\n\r\n') + 4);
    expect(new FrameDecoder().push(body).map((f) => f.payload.toString()).join('')).toBe('piped in\n');
  });
  test('options are validated at construction', () => {
    expect(() => processRuntime({ images: {} })).toThrow(/"images"/);
    expect(() => processRuntime({ images: { busybox: { program: 'busybox' } } })).toThrow(/program" must be an absolute path/);
    expect(() => processRuntime({ images: { busybox: { program: '/bin/busybox' } }, maxLogBytes: 10 })).toThrow(/maxLogBytes/);
  });
});

d('process runtime: unconfined, so isolation and resource fields are refused with a 400 naming them', () => {
  const cases: [string, object][] = [
    ['User', { User: '1000' }], ['Hostname', { Hostname: 'h' }], ['WorkingDir', { WorkingDir: '/tmp' }],
    ['HostConfig.ReadonlyRootfs', { HostConfig: { ReadonlyRootfs: true } }], ['HostConfig.Binds', { HostConfig: { Binds: ['/etc:/e'] } }],
    ['HostConfig.Memory', { HostConfig: { Memory: 1 << 26 } }], ['HostConfig.CapDrop', { HostConfig: { CapDrop: ['ALL'] } }],
    ['HostConfig.Privileged', { HostConfig: { Privileged: true } }], ['HostConfig.NetworkMode', { HostConfig: { NetworkMode: 'none' } }],
  ];
  for (const [field, extra] of cases) {
    test(field, async () => {
      const { socket } = (await listening)!;
      const res = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: ['true'], ...extra });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body.toString()).message).toContain(field);
    });
  }
});

d('process runtime: kill takes down the whole process group', () => {
  test('no background sleep outlives a killed container', async () => {
    const { socket } = (await listening)!;
    const created = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', 'sleep 4321 & sleep 4321 & wait'] });
    const id = JSON.parse(created.body.toString()).Id as string;
    await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`);
    await new Promise((r) => setTimeout(r, 300));
    expect(spawnSync('pgrep', ['-f', 'sleep 4321']).stdout.toString().trim()).not.toBe('');
    await socketRequest(socket, 'POST', `/v1.28/containers/${id}/kill`);
    await socketRequest(socket, 'POST', `/v1.28/containers/${id}/wait`);
    await new Promise((r) => setTimeout(r, 300));
    expect(spawnSync('pgrep', ['-f', 'sleep 4321']).stdout.toString().trim()).toBe('');
  });
});
