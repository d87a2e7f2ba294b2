import { test, expect, afterAll } from '@jest/globals';
import { connect } from 'node:net';
import request from 'supertest';
import { pack } from 'tar-stream';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';
import { listenOnSocket, testApp } from '../helpers.js';

const IMAGE = 'busybox:local';
const runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
const app = testApp(runtime, '1.24-1.43');
const listening = listenOnSocket(runtime, '1.24-1.43');
const created: string[] = [];
afterAll(async () => {
  for (const id of created) await request(app).delete(`/v1.41/containers/${id}?force=1`);
  await (await listening).close();
  await runtime.close?.();
});

async function running(): Promise<string> {
  const res = await request(app).post('/v1.41/containers/create').send({ Image: IMAGE, Cmd: ['sleep', '300'], HostConfig: { NetworkMode: 'none' } });
  expect(res.status).toBe(201);
  created.push(res.body.Id);
  expect((await request(app).post(`/v1.41/containers/${res.body.Id}/start`)).status).toBe(204);
  return res.body.Id as string;
}

describeWithPeers('the Docker runtime forwards exec and the container operations to dockerd', [dockerd(), dockerImage(IMAGE)], () => {
  test('exec: create 201, attached start over Upgrade is dockerd\'s own framed stream, inspect has the exit code', async () => {
    const id = await running();
    const exec = await request(app).post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['sh', '-c', 'echo out; echo err >&2; exit 5'], AttachStdout: true, AttachStderr: true });
    expect(exec.status).toBe(201);
    const { socket } = await listening;
    const body = JSON.stringify({ Detach: false, Tty: false });
    const wire = await new Promise<Buffer>((resolve, reject) => {
      const conn = connect(socket);
      const chunks: Buffer[] = [];
      conn.on('data', (c: Buffer) => chunks.push(c));
      conn.on('end', () => resolve(Buffer.concat(chunks)));
      conn.on('error', reject);
      conn.write(`POST /v1.41/exec/${exec.body.Id}/start HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    const split = wire.indexOf('\r\n\r\n');
    expect(wire.subarray(0, split).toString()).toMatch(/^HTTP\/1\.1 101 UPGRADED\r\n/);
    const frames = new FrameDecoder().push(wire.subarray(split + 4)).map((f) => [f.stream, f.payload.toString()]);
    expect(frames.sort()).toEqual([[1, 'out\n'], [2, 'err\n']]);
    const info = await request(app).get(`/v1.41/exec/${exec.body.Id}/json`);
    expect(info.body).toMatchObject({ ExitCode: 5, Running: false, ContainerID: id, ProcessConfig: { entrypoint: 'sh', arguments: ['-c', 'echo out; echo err >&2; exit 5'] } });
  });
  test('dockerd\'s own errors come back with its status and words (exec in a stopped container: 409)', async () => {
    const res = await request(app).post('/v1.41/containers/create').send({ Image: IMAGE, Cmd: ['true'] });
    created.push(res.body.Id);
    const exec = await request(app).post(`/v1.41/containers/${res.body.Id}/exec`).send({ Cmd: ['true'] });
    expect(exec.status).toBe(409);
    expect(exec.body.message).toContain('is not running');
  });
  test('pause/unpause, top and stats answer with dockerd\'s shapes', async () => {
    const id = await running();
    expect((await request(app).post(`/v1.41/containers/${id}/pause`)).status).toBe(204);
    expect((await request(app).get(`/v1.41/containers/${id}/json`)).body.State.Status).toBe('paused');
    expect((await request(app).post(`/v1.41/containers/${id}/pause`)).status).toBe(409);
    expect((await request(app).post(`/v1.41/containers/${id}/unpause`)).status).toBe(204);
    const top = await request(app).get(`/v1.41/containers/${id}/top?ps_args=-ef`);
    expect(top.body.Titles).toContain('PID');
    expect(top.body.Processes.some((p: string[]) => p.at(-1) === 'sleep 300')).toBe(true);
    const stats = JSON.parse((await request(app).get(`/v1.41/containers/${id}/stats?stream=false&one-shot=true`)).text);
    expect(stats.id).toBe(id);
    expect(stats.memory_stats.usage).toBeGreaterThan(0);
  });
  test('archive: PUT a tar, HEAD has the path stat header, GET returns the tar', async () => {
    const id = await running();
    const tar = pack();
    tar.entry({ name: 'put.txt', mode: 0o644 }, 'through dockgate\n');
    tar.finalize();
    const chunks: Buffer[] = [];
    for await (const c of tar) chunks.push(c as Buffer);
    const put = await request(app).put(`/v1.41/containers/${id}/archive?path=/`).set('Content-Type', 'application/x-tar').send(Buffer.concat(chunks));
    expect(put.status).toBe(200);
    const head = await request(app).head(`/v1.41/containers/${id}/archive?path=/put.txt`);
    expect(head.status).toBe(200);
    expect(JSON.parse(Buffer.from(head.headers['x-docker-container-path-stat'] as string, 'base64').toString())).toMatchObject({ name: 'put.txt', size: 17 });
    const get = await request(app).get(`/v1.41/containers/${id}/archive?path=/put.txt`).buffer(true).parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => cb(null, Buffer.concat(parts)));
    });
    expect(get.status).toBe(200);
    expect((get.body as Buffer).includes(Buffer.from('through dockgate\n'))).toBe(true);
    const missing = await request(app).head(`/v1.41/containers/${id}/archive?path=/nope`);
    expect(missing.status).toBe(404);
  });
  test('a stop signal (API 1.42) that dockerd 1.41 would ignore is refused naming it', async () => {
    const id = await running();
    const res = await request(app).post(`/v1.42/containers/${id}/restart?signal=SIGINT`);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^signal is not supported by the engine behind the docker runtime \(API 1\.41 < 1\.42\)/);
  });
});
