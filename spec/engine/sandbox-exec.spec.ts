import { test, expect, afterAll } from '@jest/globals';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { sandboxRuntime } from '../../lib/engine/index.js';
import { describeWithPeers, type PeerCheck } from '../support/peers.js';
import { socketRequest, listenOnSocket, testApp } from './helpers.js';

const hasPeers = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter');
const peers: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter (util-linux)', available: () => hasPeers };
const runtime = hasPeers ? sandboxRuntime() : undefined;
const app = runtime ? testApp(runtime, '1.24-1.43') : undefined;
const listening = runtime ? listenOnSocket(runtime, '1.24-1.43') : undefined;
afterAll(async () => {
  await (await listening)?.close();
  await runtime?.close?.();
});

async function running(extra: object = {}): Promise<string> {
  const res = await request(app!).post('/v1.42/containers/create').send({ Image: 'busybox', Cmd: ['sleep', '300'], ...extra });
  expect(res.status).toBe(201);
  expect((await request(app!).post(`/v1.42/containers/${res.body.Id}/start`)).status).toBe(204);
  return res.body.Id as string;
}

async function execOutput(container: string, body: object, start: object = { Detach: false }): Promise<{ output: string; exitCode: number }> {
  const exec = await request(app!).post(`/v1.42/containers/${container}/exec`).send({ AttachStdout: true, AttachStderr: true, ...body });
  expect(exec.status).toBe(201);
  const { socket } = (await listening)!;
  const res = await socketRequest(socket, 'POST', `/v1.42/exec/${exec.body.Id}/start`, start);
  const info = await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`);
  return { output: res.body.toString('latin1'), exitCode: info.body.ExitCode };
}

describeWithPeers('sandbox exec: the command joins the running container (nsenter)', [peers], () => {
  test('it sees the container\'s root filesystem, not the host\'s, and its PID namespace', async () => {
    const id = await running();
    const { output } = await execOutput(id, { Cmd: ['sh', '-c', 'test -e /etc/shadow && echo host || echo contained; cat /proc/1/cmdline | tr "\\0" " "'] });
    expect(output).toContain('contained');
    expect(output).toContain('sleep 300');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('a container with User runs its execs as that uid; the exec\'s User overrides it', async () => {
    const id = await running({ User: '1234:5678' });
    expect((await execOutput(id, { Cmd: ['id'] })).output).toContain('uid=1234 gid=5678');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('a User name resolves in the container\'s /etc/passwd; an unknown one is refused; Privileged too', async () => {
    const id = await running();
    expect((await execOutput(id, { Cmd: ['id'], User: 'nobody' })).output).toContain('uid=65534(nobody)');
    const exec = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['id'], User: 'no-such-user' });
    const res = await request(app!).post(`/v1.42/exec/${exec.body.Id}/start`).send({ Detach: true });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('no-such-user');
    const priv = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['id'], Privileged: true });
    expect((await request(app!).post(`/v1.42/exec/${priv.body.Id}/start`).send({ Detach: true })).body).toEqual({ message: 'Privileged is not supported by the sandbox runtime' });
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('Tty: the command runs on a pseudo-terminal of ConsoleSize (API 1.42), output raw', async () => {
    const id = await running();
    const { output, exitCode } = await execOutput(id, { Cmd: ['sh', '-c', 'test -t 1 && echo on-a-tty; busybox stty size'], Tty: true, ConsoleSize: [30, 100] }, { Detach: false, Tty: true, ConsoleSize: [30, 100] });
    expect(exitCode).toBe(0);
    expect(output).toBe('on-a-tty\r\n30 100\r\n');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('the exec dies with its container', async () => {
    const id = await running();
    const exec = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['sleep', '400'] });
    await request(app!).post(`/v1.42/exec/${exec.body.Id}/start`).send({ Detach: true });
    expect((await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`)).body.Running).toBe(true);
    expect((await request(app!).post(`/v1.42/containers/${id}/kill`)).status).toBe(204);
    for (let i = 0; i < 50 && (await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`)).body.Running; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`)).body.Running).toBe(false);
    expect(spawnSync('pgrep', ['-f', 'sleep 400']).stdout.toString().trim()).toBe('');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
});

describeWithPeers('sandbox docker diff: the container\'s root filesystem against its image\'s', [peers], () => {
  test('added, modified and deleted paths, sorted, with dockerd\'s kinds; a container that never ran has none (null)', async () => {
    const created = await request(app!).post('/v1.42/containers/create').send({ Image: 'busybox', Cmd: ['sh', '-c', 'mkdir /made; echo x > /made/file; rm /etc/group; echo more >> /etc/passwd'] });
    expect((await request(app!).get(`/v1.42/containers/${created.body.Id}/changes`)).body).toBeNull();
    await request(app!).post(`/v1.42/containers/${created.body.Id}/start`);
    await request(app!).post(`/v1.42/containers/${created.body.Id}/wait`);
    const changes = (await request(app!).get(`/v1.42/containers/${created.body.Id}/changes`)).body as { Path: string; Kind: number }[];
    expect(changes).toEqual(expect.arrayContaining([
      { Path: '/made', Kind: 1 }, { Path: '/made/file', Kind: 1 }, { Path: '/etc/group', Kind: 2 }, { Path: '/etc/passwd', Kind: 0 }, { Path: '/etc', Kind: 0 },
    ]));
    expect(changes.map((c) => c.Path)).toEqual([...changes.map((c) => c.Path)].sort());
    await request(app!).delete(`/v1.42/containers/${created.body.Id}`);
  });
});
