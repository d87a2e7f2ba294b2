import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';
import { nextDelay, shouldRestart } from '../../../lib/engine/runtime/local/restart-supervisor.js';
import { testApp } from '../helpers.js';

/**
 * `busybox`: `fail` exits 1, `ok` exits 0, `sleep` runs until stopped, `crash-once` exits 1 on
 * its first run and sleeps on the next ones (per container, counted by its `RUN_ID` env).
 */
const runs = new Map<string, number>();
const runtime = scriptedRuntime({
  images: {
    'busybox:latest': async ({ argv, env, signal }) => {
      const key = env.find((e) => e.startsWith('RUN_ID=')) ?? '';
      runs.set(key, (runs.get(key) ?? 0) + 1);
      if (argv[0] === 'fail') return { exitCode: 1 };
      if (argv[0] === 'ok') return {};
      if (argv[0] === 'crash-once' && runs.get(key) === 1) return { exitCode: 1 };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      return {};
    },
  },
});
const app = testApp(runtime, '1.24-1.43');
afterAll(async () => runtime.close?.());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let n = 0;
async function created(cmd: string, hostConfig: object): Promise<{ res: request.Response; runId: string }> {
  const runId = `RUN_ID=${++n}-${Date.now()}`;
  const res = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: [cmd], Env: [runId], HostConfig: hostConfig });
  return { res, runId };
}
async function started(cmd: string, policy: object, extra: object = {}): Promise<{ id: string; runId: string }> {
  const { res, runId } = await created(cmd, { RestartPolicy: policy, ...extra });
  expect(res.status).toBe(201);
  expect((await request(app).post(`/v1.41/containers/${res.body.Id}/start`)).status).toBe(204);
  return { id: res.body.Id as string, runId };
}
const inspect = async (id: string): Promise<Record<string, any>> => (await request(app).get(`/v1.41/containers/${id}/json`)).body;
const text = (res: request.Response, cb: (e: Error | null, body: string) => void): void => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (body += c));
  res.on('end', () => cb(null, body));
};
async function actions(id: string, since: number): Promise<string[]> {
  const events = await request(app).get(`/v1.41/events?since=${since}&until=${Date.now() / 1000}&filters=${encodeURIComponent(JSON.stringify({ container: { [id]: true } }))}`).buffer(true).parse(text);
  return (events.body as string).trim().split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { Action: string }).Action);
}

describe('an invalid restart policy is refused with dockerd\'s message', () => {
  test.each([
    [{ Name: 'bogus' }, "invalid restart policy 'bogus'"],
    [{ Name: 'always', MaximumRetryCount: 2 }, "maximum retry count cannot be used with restart policy 'always'"],
    [{ Name: 'on-failure', MaximumRetryCount: -1 }, 'maximum retry count cannot be negative'],
  ])('%j: 400', async (policy, message) => {
    const { res } = await created('ok', { RestartPolicy: policy });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message });
  });
  test('AutoRemove with a restart policy: 400 as dockerd words it', async () => {
    const { res } = await created('ok', { AutoRemove: true, RestartPolicy: { Name: 'always' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: "can't create 'AutoRemove' container with restart policy" });
  });
});

describe('on-failure:N restarts a failing container N times, then leaves it exited', () => {
  test('exit 1 with on-failure:2: two restarts, RestartCount 2, exited; events die, start, die, start, die', async () => {
    const since = Date.now() / 1000 - 1;
    const { id, runId } = await started('fail', { Name: 'on-failure', MaximumRetryCount: 2 });
    // Backoff: 100 ms, then 200 ms.
    await sleep(700);
    const c = await inspect(id);
    expect(c.RestartCount).toBe(2);
    expect(c.State).toMatchObject({ Status: 'exited', Running: false, Restarting: false, ExitCode: 1 });
    expect(c.HostConfig.RestartPolicy).toEqual({ Name: 'on-failure', MaximumRetryCount: 2 });
    expect(runs.get(runId)).toBe(3);
    expect(await actions(id, since)).toEqual(['create', 'start', 'die', 'start', 'die', 'start', 'die']);
  });
  test('a zero exit is not restarted by on-failure', async () => {
    const { id, runId } = await started('ok', { Name: 'on-failure' });
    await sleep(250);
    expect((await inspect(id)).RestartCount).toBe(0);
    expect(runs.get(runId)).toBe(1);
  });
});

describe('always brings a crashed container back; docker stop and kill keep it down', () => {
  test('a crash is followed by a restart: running again with RestartCount 1', async () => {
    const { id } = await started('crash-once', { Name: 'always' });
    await sleep(300);
    const c = await inspect(id);
    expect(c.State).toMatchObject({ Status: 'running', Running: true });
    expect(c.RestartCount).toBe(1);
    await request(app).post(`/v1.41/containers/${id}/stop?t=0`);
  });
  test('while waiting for its restart it is restarting (State.Restarting, docker ps Restarting (1))', async () => {
    const { id } = await started('fail', { Name: 'always' });
    // By the third restart the backoff (400 ms, then 800 ms) leaves room to look.
    let row: { Id: string; State: string; Status: string } | undefined;
    for (let i = 0; i < 400 && !(row?.State === 'restarting' && (await inspect(id)).RestartCount >= 3); i += 1) {
      await sleep(10);
      row = ((await request(app).get('/v1.41/containers/json')).body as { Id: string; State: string; Status: string }[]).find((r) => r.Id === id);
    }
    expect(row?.Status).toMatch(/^Restarting \(1\) /);
    expect((await inspect(id)).State).toMatchObject({ Status: 'restarting', Running: true, Restarting: true, ExitCode: 1 });
    const rm = await request(app).delete(`/v1.41/containers/${id}`);
    expect(rm.status).toBe(409);
    expect(rm.body).toEqual({ message: `You cannot remove a restarting container ${id}. Stop the container before attempting removal or force remove` });
    expect((await request(app).delete(`/v1.41/containers/${id}?force=1`)).status).toBe(204);
  });
  test('docker stop of an always container keeps it stopped', async () => {
    const { id, runId } = await started('sleep', { Name: 'always' });
    expect((await request(app).post(`/v1.41/containers/${id}/stop?t=1`)).status).toBe(204);
    await sleep(300);
    expect((await inspect(id)).State).toMatchObject({ Status: 'exited', Running: false, Restarting: false });
    expect(runs.get(runId)).toBe(1);
  });
  test('docker kill (SIGKILL) of an always container keeps it stopped; a user start begins with RestartCount 0', async () => {
    const { id, runId } = await started('crash-once', { Name: 'always' });
    await sleep(300);
    expect((await inspect(id)).RestartCount).toBe(1);
    expect((await request(app).post(`/v1.41/containers/${id}/kill`)).status).toBe(204);
    await sleep(300);
    expect((await inspect(id)).State.Running).toBe(false);
    expect(runs.get(runId)).toBe(2);
    expect((await request(app).post(`/v1.41/containers/${id}/start`)).status).toBe(204);
    expect((await inspect(id)).RestartCount).toBe(0);
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
});

describe('docker update --restart is allowed and applies at the next exit', () => {
  test('a container created with no policy gets on-failure:1 by update: its next failure is restarted once', async () => {
    const { id, runId } = await started('fail', { Name: '' });
    await sleep(200);
    expect((await inspect(id)).State.Running).toBe(false);
    expect(runs.get(runId)).toBe(1);
    const res = await request(app).post(`/v1.41/containers/${id}/update`).send({ RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 1 } });
    expect(res.status).toBe(200);
    expect((await inspect(id)).HostConfig.RestartPolicy).toEqual({ Name: 'on-failure', MaximumRetryCount: 1 });
    expect((await request(app).post(`/v1.41/containers/${id}/start`)).status).toBe(204);
    await sleep(400);
    expect(runs.get(runId)).toBe(3);
    expect((await inspect(id)).RestartCount).toBe(1);
  });
  test('an invalid policy is 400; on an AutoRemove container, 409 as dockerd answers', async () => {
    const { res } = await created('sleep', {});
    expect((await request(app).post(`/v1.41/containers/${res.body.Id}/update`).send({ RestartPolicy: { Name: 'bogus' } })).body).toEqual({ message: "invalid restart policy 'bogus'" });
    const { res: auto } = await created('sleep', { AutoRemove: true });
    const refused = await request(app).post(`/v1.41/containers/${auto.body.Id}/update`).send({ RestartPolicy: { Name: 'always' } });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ message: `Cannot update container ${auto.body.Id}: Restart policy cannot be updated because AutoRemove is enabled for the container` });
  });
});

describe('the supervisor decides as dockerd\'s restartmanager', () => {
  test('backoff: 100 ms doubling to one minute, back to 100 ms after a run of 10 s', () => {
    const delays: number[] = [];
    let last = 0;
    for (let i = 0; i < 12; i += 1) delays.push((last = nextDelay(last, 50)));
    expect(delays.slice(0, 4)).toEqual([100, 200, 400, 800]);
    expect(delays.at(-1)).toBe(60_000);
    expect(nextDelay(60_000, 10_000)).toBe(100);
  });
  test('unless-stopped restarts unless the user stopped it; on-failure counts; no never', () => {
    expect(shouldRestart({ Name: 'unless-stopped', MaximumRetryCount: 0 }, 0, false, 5)).toBe(true);
    expect(shouldRestart({ Name: 'unless-stopped', MaximumRetryCount: 0 }, 1, true, 0)).toBe(false);
    expect(shouldRestart({ Name: 'always', MaximumRetryCount: 0 }, 0, true, 0)).toBe(true);
    expect(shouldRestart({ Name: 'on-failure', MaximumRetryCount: 0 }, 1, false, 99)).toBe(true);
    expect(shouldRestart({ Name: 'on-failure', MaximumRetryCount: 3 }, 1, false, 3)).toBe(false);
    expect(shouldRestart({ Name: 'no', MaximumRetryCount: 0 }, 1, false, 0)).toBe(false);
  });
});
