import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';
import { goDuration, mergeHealthcheck } from '../../../lib/engine/runtime/local/healthcheck.js';
import { testApp } from '../helpers.js';

/**
 * `busybox` sleeps until stopped. An exec (the probe) answers from `checks`: `ok` exits 0, `fail`
 * exits 1, `hang` never ends, `loud` writes 5000 bytes; a CMD-SHELL probe arrives as /bin/sh -c.
 */
let verdict: 'ok' | 'fail' = 'ok';
const runtime = scriptedRuntime({
  images: {
    'busybox:latest': async ({ argv, signal }) => {
      if (argv[0] === 'run' || argv[0] === 'sleep') {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return {};
      }
      const command = argv[0] === '/bin/sh' ? argv[2] : argv[0];
      if (command === 'hang') await new Promise((resolve) => signal.addEventListener('abort', resolve));
      if (command === 'loud') return { stdout: 'x'.repeat(5000) };
      if (command === 'verdict') return verdict === 'ok' ? { stdout: 'fine\n' } : { stderr: 'gone\n', exitCode: 1 };
      return { exitCode: command === 'true' ? 0 : 1 };
    },
  },
});
const app = testApp(runtime, '1.24-1.43');
afterAll(async () => runtime.close?.());

const MS = 1e6;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function started(body: object): Promise<string> {
  const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['sleep'], ...body });
  expect(created.status).toBe(201);
  expect((await request(app).post(`/v1.41/containers/${created.body.Id}/start`)).status).toBe(204);
  return created.body.Id as string;
}
const state = async (id: string): Promise<Record<string, any>> => (await request(app).get(`/v1.41/containers/${id}/json`)).body.State;
async function until(id: string, status: string): Promise<Record<string, any>> {
  for (let i = 0; i < 100; i += 1) {
    const s = await state(id);
    if (s.Health?.Status === status) return s;
    await sleep(20);
  }
  throw new Error(`health never became ${status}: ${JSON.stringify((await state(id)).Health)}`);
}
const text = (res: request.Response, cb: (e: Error | null, body: string) => void): void => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (body += c));
  res.on('end', () => cb(null, body));
};

describe('an invalid healthcheck is refused with dockerd\'s message', () => {
  test.each([
    [{ Interval: 1000 }, 'Interval in Healthcheck cannot be less than 1ms'],
    [{ Timeout: 999_999 }, 'Timeout in Healthcheck cannot be less than 1ms'],
    [{ StartPeriod: 1 }, 'StartPeriod in Healthcheck cannot be less than 1ms'],
    [{ Retries: -1 }, 'Retries in Healthcheck cannot be negative'],
  ])('%j: 400', async (fields, message) => {
    const res = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Healthcheck: { Test: ['CMD', 'true'], ...fields } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message });
  });
  test('a Test kind dockerd would never run is refused, naming it (not silently never probed)', async () => {
    const res = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Healthcheck: { Test: ['BOGUS', 'true'] } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("unknown healthcheck type 'BOGUS'");
  });
});

describe('a passing check makes the container healthy: State.Health, its log, the event, docker ps', () => {
  test('starting, then healthy with FailingStreak 0 and log entries of the probe output', async () => {
    verdict = 'ok';
    const since = Date.now() / 1000 - 1;
    const id = await started({ Healthcheck: { Test: ['CMD-SHELL', 'verdict'], Interval: 30 * MS } });
    expect((await state(id)).Health).toEqual({ Status: 'starting', FailingStreak: 0, Log: [] });
    const s = await until(id, 'healthy');
    expect(s.Health.FailingStreak).toBe(0);
    expect(s.Health.Log[0]).toMatchObject({ ExitCode: 0, Output: 'fine\n' });
    expect(Date.parse(s.Health.Log[0].End)).toBeGreaterThanOrEqual(Date.parse(s.Health.Log[0].Start));
    const inspect = (await request(app).get(`/v1.41/containers/${id}/json`)).body;
    expect(inspect.Config.Healthcheck).toEqual({ Test: ['CMD-SHELL', 'verdict'], Interval: 30 * MS });
    const row = (await request(app).get('/v1.41/containers/json')).body.find((c: { Id: string }) => c.Id === id);
    expect(row.Status).toMatch(/^Up .* \(healthy\)$/);
    const events = await request(app).get(`/v1.41/events?since=${since}&until=${Date.now() / 1000 + 1}&filters=${encodeURIComponent(JSON.stringify({ container: { [id]: true } }))}`).buffer(true).parse(text);
    const actions = (events.body as string).trim().split('\n').map((l) => (JSON.parse(l) as { Action: string }).Action);
    expect(actions).toContain('health_status: healthy');
    // `--filter event=health_status` matches the event with its status, as dockerd's filter does.
    const filtered = await request(app).get(`/v1.41/events?since=${since}&until=${Date.now() / 1000 + 1}&filters=${encodeURIComponent(JSON.stringify({ container: { [id]: true }, event: { health_status: true } }))}`).buffer(true).parse(text);
    expect((filtered.body as string).trim().split('\n').map((l) => (JSON.parse(l) as { Action: string }).Action)).toEqual(['health_status: healthy']);
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
  test('the log keeps the last 5 results', async () => {
    const id = await started({ Healthcheck: { Test: ['CMD', 'true'], Interval: 5 * MS } });
    await until(id, 'healthy');
    await sleep(150);
    expect((await state(id)).Health.Log).toHaveLength(5);
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
});

describe('failing checks make it unhealthy after Retries in a row; the start period does not count', () => {
  test('healthy, then the check fails Retries times: unhealthy, FailingStreak counted, health_status: unhealthy', async () => {
    verdict = 'ok';
    const since = Date.now() / 1000 - 1;
    const id = await started({ Healthcheck: { Test: ['CMD', 'verdict'], Interval: 20 * MS, Retries: 2 } });
    await until(id, 'healthy');
    verdict = 'fail';
    const s = await until(id, 'unhealthy');
    expect(s.Health.FailingStreak).toBeGreaterThanOrEqual(2);
    expect(s.Health.Log.at(-1)).toMatchObject({ ExitCode: 1, Output: 'gone\n' });
    const rows = (await request(app).get(`/v1.41/containers/json?filters=${encodeURIComponent(JSON.stringify({ health: ['unhealthy'] }))}`)).body as { Id: string; Status: string }[];
    expect(rows.map((r) => r.Id)).toContain(id);
    expect(rows.find((r) => r.Id === id)?.Status).toMatch(/\(unhealthy\)$/);
    const events = await request(app).get(`/v1.41/events?since=${since}&until=${Date.now() / 1000 + 1}&filters=${encodeURIComponent(JSON.stringify({ container: { [id]: true } }))}`).buffer(true).parse(text);
    const actions = (events.body as string).trim().split('\n').map((l) => (JSON.parse(l) as { Action: string }).Action);
    expect(actions.filter((a) => a.startsWith('health_status'))).toEqual(['health_status: healthy', 'health_status: unhealthy']);
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
  test('failures inside StartPeriod leave it starting with no streak', async () => {
    const id = await started({ Healthcheck: { Test: ['CMD', 'false'], Interval: 10 * MS, Retries: 1, StartPeriod: 10_000 * MS } });
    await sleep(120);
    const s = await state(id);
    expect(s.Health.Status).toBe('starting');
    expect(s.Health.FailingStreak).toBe(0);
    expect(s.Health.Log.length).toBeGreaterThan(0);
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
  test('a probe past its Timeout is killed and logged with ExitCode -1 and dockerd\'s words', async () => {
    const id = await started({ Healthcheck: { Test: ['CMD', 'hang'], Interval: 10 * MS, Timeout: 30 * MS, Retries: 1 } });
    const s = await until(id, 'unhealthy');
    expect(s.Health.Log[0]).toMatchObject({ ExitCode: -1, Output: 'Health check exceeded timeout (30ms)' });
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
  test('output is capped at 4096 bytes, marked with "..." as dockerd marks it', async () => {
    const id = await started({ Healthcheck: { Test: ['CMD', 'loud'], Interval: 10 * MS } });
    const s = await until(id, 'healthy');
    expect(s.Health.Log[0].Output).toBe(`${'x'.repeat(4096)}...`);
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
});

describe('NONE and no healthcheck: no State.Health; the health filter says none', () => {
  test('Test ["NONE"] runs nothing; health=none lists it; an unknown health value is 400 with dockerd\'s message', async () => {
    const id = await started({ Healthcheck: { Test: ['NONE'] } });
    await sleep(30);
    expect((await state(id)).Health).toBeUndefined();
    const none = (await request(app).get(`/v1.41/containers/json?filters=${encodeURIComponent(JSON.stringify({ health: ['none'] }))}`)).body as { Id: string }[];
    expect(none.map((r) => r.Id)).toContain(id);
    const healthy = (await request(app).get(`/v1.41/containers/json?filters=${encodeURIComponent(JSON.stringify({ health: ['healthy'] }))}`)).body as { Id: string }[];
    expect(healthy.map((r) => r.Id)).not.toContain(id);
    const bad = await request(app).get(`/v1.41/containers/json?filters=${encodeURIComponent(JSON.stringify({ health: ['bogus'] }))}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Unrecognised filter value for health: bogus' });
    await request(app).post(`/v1.41/containers/${id}/kill`);
  });
});

describe('the image\'s healthcheck is merged with the body\'s as dockerd merges them', () => {
  const image = { Test: ['CMD', 'img'], Interval: 5 * MS, Timeout: 6 * MS, StartPeriod: 7 * MS, Retries: 4 };
  test('no body healthcheck takes the image\'s; zero fields and an empty Test take the image\'s values', () => {
    expect(mergeHealthcheck(undefined, image)).toEqual(image);
    expect(mergeHealthcheck({ Test: [], Interval: 9 * MS }, image)).toEqual({ ...image, Interval: 9 * MS });
    expect(mergeHealthcheck({ Test: ['NONE'] }, image)).toMatchObject({ Test: ['NONE'] });
    expect(mergeHealthcheck({ Test: ['CMD', 'own'] }, undefined)).toEqual({ Test: ['CMD', 'own'] });
  });
  test('durations print as Go prints them in the timeout message', () => {
    expect([goDuration(30e9), goDuration(90e9), goDuration(1.5e9), goDuration(500 * MS)]).toEqual(['30s', '1m30s', '1.5s', '500ms']);
  });
});
