import { describe, test, expect, afterAll } from '@jest/globals';
import { connect } from 'node:net';
import request from 'supertest';
import { FrameDecoder, type ContainerRuntime } from '../../../lib/engine/index.js';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';
import { listenOnSocket, socketRequest, testApp } from '../helpers.js';

/** `busybox` answers exec commands: echo, env, fail (exit 3 with stderr), cat (echoes stdin), sleep (until killed). */
function execRuntime(): ContainerRuntime {
  return scriptedRuntime({
    images: {
      'busybox:latest': async ({ argv, env, write, signal, stdin }) => {
        const [cmd, ...args] = argv;
        if (cmd === 'echo') return { stdout: `${args.join(' ')}\n` };
        if (cmd === 'env') return { stdout: `${env.join('\n')}\n` };
        if (cmd === 'fail') return { stdout: 'out\n', stderr: 'err\n', exitCode: 3 };
        if (cmd === 'cat' && stdin) {
          for await (const chunk of stdin) write(1, chunk as Buffer);
          return {};
        }
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return {};
      },
    },
  });
}

const runtime = execRuntime();
const app = testApp(runtime, '1.24-1.43');
const listening = listenOnSocket(runtime, '1.24-1.43');
afterAll(async () => {
  await runtime.close?.();
  await (await listening).close();
});

async function running(name?: string): Promise<string> {
  const created = await request(app).post(`/v1.41/containers/create${name ? `?name=${name}` : ''}`).send({ Image: 'busybox', Cmd: ['sleep'], Env: ['FROM_CONTAINER=1'] });
  expect(created.status).toBe(201);
  expect((await request(app).post(`/v1.41/containers/${created.body.Id}/start`)).status).toBe(204);
  return created.body.Id as string;
}

async function execCreate(container: string, body: object, version = '1.41'): Promise<request.Response> {
  return request(app).post(`/v${version}/containers/${container}/exec`).send(body);
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
}

/** An exec start over `Upgrade: tcp` as the Docker CLI and dockerode send it; `input` is written after the 101, then half-closed. */
function upgradedStart(socket: string, id: string, version: string, input?: string): Promise<{ head: string; body: Buffer }> {
  const body = JSON.stringify({ Detach: false, Tty: false });
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    const chunks: Buffer[] = [];
    let sent = false;
    conn.on('data', (c: Buffer) => {
      chunks.push(c);
      if (!sent && input !== undefined && Buffer.concat(chunks).includes('\r\n\r\n')) {
        sent = true;
        conn.end(input);
      }
    });
    conn.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      resolve({ head: all.subarray(0, split).toString(), body: all.subarray(split + 4) });
    });
    conn.on('error', reject);
    conn.write(`POST /v${version}/exec/${id}/start HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  });
}

describe('POST /containers/{id}/exec registers a command in a running container', () => {
  test('201 with a 64-hex Id; inspect shows it not yet run (ExitCode null)', async () => {
    const c = await running();
    const res = await execCreate(c, { Cmd: ['echo', 'hi'], AttachStdout: true });
    expect(res.status).toBe(201);
    expect(res.body.Id).toMatch(/^[0-9a-f]{64}$/);
    const info = await request(app).get(`/v1.41/exec/${res.body.Id}/json`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      ID: res.body.Id, Running: false, ExitCode: null, ContainerID: c, OpenStdout: true, OpenStdin: false, Pid: 0,
      ProcessConfig: { tty: false, entrypoint: 'echo', arguments: ['hi'], privileged: false, user: '' },
    });
  });
  test('a stopped container is 409 "Container <id> is not running"', async () => {
    const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['echo'] });
    const res = await execCreate(created.body.Id, { Cmd: ['echo'] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: `Container ${created.body.Id} is not running` });
  });
  test('an unknown container is 404, a missing command 400 "No exec command specified", a mistyped field 400 naming it', async () => {
    expect((await execCreate('ghost', { Cmd: ['echo'] })).body).toEqual({ message: 'No such container: ghost' });
    const c = await running();
    const empty = await execCreate(c, { Cmd: [] });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ message: 'No exec command specified' });
    const typed = await execCreate(c, { Cmd: 'echo hi' });
    expect(typed.status).toBe(400);
    expect(typed.body.message).toBe('Cmd must be a list of strings');
    expect((await execCreate(c, { Cmd: ['echo'], Env: 'A=1' })).body).toEqual({ message: 'Env must be a list of strings' });
  });
  test('ConsoleSize is checked from API 1.42 and dropped below it, as dockerd does', async () => {
    const c = await running();
    expect((await execCreate(c, { Cmd: ['echo'], ConsoleSize: [1] }, '1.41')).status).toBe(201);
    const bad = await execCreate(c, { Cmd: ['echo'], ConsoleSize: [1] }, '1.42');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^ConsoleSize must be \[height, width\]/);
  });
});

describe('POST /exec/{id}/start runs it detached or attached', () => {
  test('detached: an empty 200 at once, then inspect shows the exit code', async () => {
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['fail'] });
    const res = await request(app).post(`/v1.41/exec/${body.Id}/start`).send({ Detach: true });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    await until(async () => (await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.Running === false);
    const info = await request(app).get(`/v1.41/exec/${body.Id}/json`);
    expect(info.body.ExitCode).toBe(3);
  });
  test('attached over Upgrade: 101, stdout and stderr as stdcopy frames, closed at exit (Content-Type raw below 1.42)', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['fail'], AttachStdout: true, AttachStderr: true });
    const wire = await upgradedStart(socket, body.Id, '1.41');
    expect(wire.head).toMatch(/^HTTP\/1\.1 101 UPGRADED\r\n/);
    expect(wire.head).toMatch(/\r\nContent-Type: application\/vnd\.docker\.raw-stream\r\n/);
    const frames = new FrameDecoder().push(wire.body);
    expect(frames.map((f) => [f.stream, f.payload.toString()]).sort()).toEqual([[1, 'out\n'], [2, 'err\n']]);
    expect((await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.ExitCode).toBe(3);
  });
  test('from API 1.42 the upgraded stream is labelled multiplexed', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo', 'x'], AttachStdout: true }, '1.42');
    const wire = await upgradedStart(socket, body.Id, '1.42');
    expect(wire.head).toMatch(/\r\nContent-Type: application\/vnd\.docker\.multiplexed-stream\r\n/);
  });
  test('stdin: bytes the client writes after the 101 reach the command, its end closes it', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['cat'], AttachStdin: true, AttachStdout: true });
    const wire = await upgradedStart(socket, body.Id, '1.41', 'typed in\n');
    expect(new FrameDecoder().push(wire.body).map((f) => f.payload.toString()).join('')).toBe('typed in\n');
  });
  test('the command gets the container environment followed by the exec Env', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['env'], Env: ['FROM_EXEC=2'], AttachStdout: true });
    const out = new FrameDecoder().push((await upgradedStart(socket, body.Id, '1.41')).body).map((f) => f.payload.toString()).join('');
    expect(out).toMatch(/FROM_CONTAINER=1\n(.*\n)*FROM_EXEC=2\n/);
  });
  test('starting twice is 409, an unknown exec 404 "No such exec instance"', async () => {
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo'] });
    expect((await request(app).post(`/v1.41/exec/${body.Id}/start`).send({ Detach: true })).status).toBe(200);
    await until(async () => (await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.Running === false);
    const again = await request(app).post(`/v1.41/exec/${body.Id}/start`).send({ Detach: true });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: `Error: Exec command ${body.Id} has already run` });
    const ghost = await request(app).post('/v1.41/exec/ghost/start').send({ Detach: true });
    expect(ghost.status).toBe(404);
    expect(ghost.body).toEqual({ message: 'No such exec instance: ghost' });
  });
  test('lifecycle events as dockerd names them: exec_create: <cmd>, exec_start: <cmd>, exec_die with exitCode', async () => {
    const c = await running();
    const since = Math.floor(Date.now() / 1000) - 1;
    const { body } = await execCreate(c, { Cmd: ['fail'] });
    await request(app).post(`/v1.41/exec/${body.Id}/start`).send({ Detach: true });
    await until(async () => (await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.Running === false);
    const res = await request(app).get(`/v1.41/events?since=${since}&until=${Math.ceil(Date.now() / 1000) + 1}&filters=${encodeURIComponent(JSON.stringify({ container: { [c]: true } }))}`).buffer(true).parse((r, cb) => {
      let text = '';
      r.on('data', (chunk: Buffer) => (text += chunk.toString()));
      r.on('end', () => cb(null, text));
    });
    const events = (res.body as string).trim().split('\n').map((l) => JSON.parse(l) as { Action: string; Actor: { Attributes: Record<string, string> } });
    const execs = events.filter((e) => e.Actor.Attributes.execID === body.Id);
    expect(execs.map((e) => e.Action)).toEqual(['exec_create: fail', 'exec_start: fail', 'exec_die']);
    expect(execs[2]!.Actor.Attributes.exitCode).toBe('3');
  });
  test('a running exec is killed when its container stops', async () => {
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['sleep'] });
    await request(app).post(`/v1.41/exec/${body.Id}/start`).send({ Detach: true });
    expect((await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.Running).toBe(true);
    expect((await request(app).post(`/v1.41/containers/${c}/kill`)).status).toBe(204);
    await until(async () => (await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.Running === false);
    expect((await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.ExitCode).toBe(137);
  });
});

describe('POST /exec/{id}/resize takes h and w', () => {
  test('200 for numbers, 400 naming a bad one', async () => {
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo'], Tty: true });
    expect((await request(app).post(`/v1.41/exec/${body.Id}/resize?h=40&w=120`)).status).toBe(200);
    const bad = await request(app).post(`/v1.41/exec/${body.Id}/resize?h=x&w=120`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^invalid h value "x"/);
  });
});

describe('a runtime without exec answers 501 naming the feature and the runtime', () => {
  const inner = execRuntime();
  const bare: ContainerRuntime = {
    name: 'bare',
    create: (r) => inner.create(r), start: (id) => inner.start(id), wait: (id, c, s) => inner.wait(id, c, s), logs: (id, o) => inner.logs(id, o),
    attach: (id, o) => inner.attach(id, o), inspect: (id) => inner.inspect(id), list: (o) => inner.list(o), remove: (id, o) => inner.remove(id, o),
    events: (o) => inner.events(o),
  };
  const bareApp = testApp(bare, '1.24-1.43');
  test.each([
    ['post', '/v1.41/containers/x/exec'],
    ['post', '/v1.41/exec/x/start'],
    ['get', '/v1.41/exec/x/json'],
    ['post', '/v1.41/exec/x/resize?h=1&w=1'],
  ] as const)('%s %s → 501 "exec is not supported by the bare runtime"', async (method, path) => {
    const res = await request(bareApp)[method](path).send(method === 'post' ? { Cmd: ['x'] } : undefined);
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ message: 'exec is not supported by the bare runtime' });
  });
  afterAll(async () => inner.close?.());
});

describe('exec over the socket helper (plain request, no upgrade)', () => {
  test('without an upgrade the command\'s stdin is closed at once (it cannot be written), so cat ends', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['cat'], AttachStdin: true, AttachStdout: true });
    const res = await socketRequest(socket, 'POST', `/v1.41/exec/${body.Id}/start`, { Detach: false });
    expect(res.status).toBe(200);
    expect((await request(app).get(`/v1.41/exec/${body.Id}/json`)).body.ExitCode).toBe(0);
  });
  test('a plain POST without Upgrade gets 200 and the framed output until the exec ends', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo', 'plain'], AttachStdout: true });
    const res = await socketRequest(socket, 'POST', `/v1.41/exec/${body.Id}/start`, { Detach: false });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.docker.raw-stream');
    expect(new FrameDecoder().push(res.body).map((f) => f.payload.toString())).toEqual(['plain\n']);
  });
});

describe('exec output is framed by exec start\'s Tty, not create\'s, as dockerd frames it', () => {
  test('created with Tty, started with Tty false (docker-py): stdcopy frames', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo', 'framed'], AttachStdout: true, Tty: true });
    const res = await socketRequest(socket, 'POST', `/v1.41/exec/${body.Id}/start`, { Detach: false, Tty: false });
    expect(res.status).toBe(200);
    expect(new FrameDecoder().push(res.body).map((f) => [f.stream, f.payload.toString()])).toEqual([[1, 'framed\n']]);
  });
  test('created without Tty, started with Tty true: the raw bytes, no frame headers', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo', 'raw'], AttachStdout: true, Tty: false });
    const res = await socketRequest(socket, 'POST', `/v1.41/exec/${body.Id}/start`, { Detach: false, Tty: true });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('raw\n');
  });
  test('from API 1.42 the upgraded stream\'s label follows start\'s Tty too', async () => {
    const { socket } = await listening;
    const c = await running();
    const { body } = await execCreate(c, { Cmd: ['echo', 'x'], AttachStdout: true, Tty: true }, '1.43');
    const started = await upgradedStart(socket, body.Id, '1.43');
    expect(started.head).toContain('Content-Type: application/vnd.docker.multiplexed-stream');
    expect(new FrameDecoder().push(started.body).map((f) => f.payload.toString())).toEqual(['x\n']);
  });
});
