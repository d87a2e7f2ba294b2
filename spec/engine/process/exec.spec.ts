import { describe, test, expect, afterAll } from '@jest/globals';
import { existsSync } from 'node:fs';
import request from 'supertest';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { listenOnSocket, socketRequest, testApp } from '../helpers.js';

const runtime = processRuntime({ images: { 'busybox:latest': { program: '/bin/busybox' } } });
const app = testApp(runtime, '1.24-1.41');
const listening = listenOnSocket(runtime, '1.24-1.41');
afterAll(async () => {
  await runtime.close?.();
  await (await listening).close();
});
const d = existsSync('/bin/busybox') ? describe : describe.skip;

async function running(): Promise<string> {
  const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['sleep', '300'], Env: ['IN_CONTAINER=yes'] });
  expect((await request(app).post(`/v1.41/containers/${created.body.Id}/start`)).status).toBe(204);
  return created.body.Id as string;
}

d('process runtime exec: the image\'s program with the exec\'s argv (unconfined)', () => {
  test('argv[0] picks the applet; the environment is the container\'s plus the exec\'s; the exit code is kept', async () => {
    const id = await running();
    const exec = await request(app).post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['sh', '-c', 'echo $IN_CONTAINER $FROM_EXEC; exit 2'], Env: ['FROM_EXEC=too'], AttachStdout: true });
    const { socket } = await listening;
    const res = await socketRequest(socket, 'POST', `/v1.41/exec/${exec.body.Id}/start`, { Detach: false });
    expect(new FrameDecoder().push(res.body).map((f) => f.payload.toString()).join('')).toBe('yes too\n');
    expect((await request(app).get(`/v1.41/exec/${exec.body.Id}/json`)).body.ExitCode).toBe(2);
    await request(app).delete(`/v1.41/containers/${id}?force=1`);
  });
  test.each([['User', { User: '1000' }], ['WorkingDir', { WorkingDir: '/tmp' }], ['Privileged', { Privileged: true }]] as const)('%s is refused naming it (400)', async (field, extra) => {
    const id = await running();
    const exec = await request(app).post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['true'], ...extra });
    const res = await request(app).post(`/v1.41/exec/${exec.body.Id}/start`).send({ Detach: true });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: `${field} is not supported by the process runtime` });
    await request(app).delete(`/v1.41/containers/${id}?force=1`);
  });
  test('docker cp has no filesystem of its own to copy: 501', async () => {
    const id = await running();
    expect((await request(app).get(`/v1.41/containers/${id}/archive?path=/etc`)).body).toEqual({ message: 'copying files (archive) is not supported by the process runtime' });
    await request(app).delete(`/v1.41/containers/${id}?force=1`);
  });
  test('top lists the container\'s process group; pause stops it (State T), unpause resumes it', async () => {
    const id = await running();
    const top = await request(app).get(`/v1.41/containers/${id}/top?ps_args=-o pid,stat,args`);
    expect(top.body.Titles).toEqual(['PID', 'STAT', 'COMMAND']);
    expect(top.body.Processes).toHaveLength(1);
    expect(top.body.Processes[0][2]).toBe('sleep 300');
    await request(app).post(`/v1.41/containers/${id}/pause`);
    expect((await request(app).get(`/v1.41/containers/${id}/top?ps_args=-o pid,stat,args`)).body.Processes[0][1]).toMatch(/^T/);
    await request(app).post(`/v1.41/containers/${id}/unpause`);
    expect((await request(app).get(`/v1.41/containers/${id}/top?ps_args=-o pid,stat,args`)).body.Processes[0][1]).toMatch(/^S/);
    await request(app).delete(`/v1.41/containers/${id}?force=1`);
  });
});

d('process runtime healthchecks: run as its exec runs (a host process, unconfined like the container)', () => {
  test('a CMD-SHELL check runs through the image\'s program (sh applet) with the container\'s environment: healthy', async () => {
    const created = await request(app).post('/v1.41/containers/create').send({
      Image: 'busybox', Cmd: ['sleep', '300'], Env: ['IN_CONTAINER=yes'],
      Healthcheck: { Test: ['CMD-SHELL', 'echo probe-$IN_CONTAINER'], Interval: 20e6 },
    });
    const id = created.body.Id as string;
    expect((await request(app).post(`/v1.41/containers/${id}/start`)).status).toBe(204);
    let health: { Status: string; Log: { ExitCode: number; Output: string }[] } | undefined;
    for (let i = 0; i < 100 && health?.Status !== 'healthy'; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      health = (await request(app).get(`/v1.41/containers/${id}/json`)).body.State.Health;
    }
    expect(health?.Status).toBe('healthy');
    expect(health?.Log[0]).toMatchObject({ ExitCode: 0, Output: 'probe-yes\n' });
    await request(app).delete(`/v1.41/containers/${id}?force=1`);
  });
});
