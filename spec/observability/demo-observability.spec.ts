/**
 * The demo app as users run it (`node demo/dist/main.js`, built by `npm test`'s pretest), watched
 * the way an operator watches it: Prometheus metrics scraped over HTTP from `/metrics`, and the
 * pino JSON lines it writes to stdout. Refresh tokens and failed-login counts live in a private
 * redis-server started here on an ephemeral port, stopped mid-test for the store outage.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisProcess, type RedisProcess } from '../interop/fixtures/redis-process.js';
import { describeWithPeers, program } from '../support/peers.js';
import { until } from '../support/until.js';

const MAIN = join(process.cwd(), 'demo/dist/main.js');
const SERVICE = 'registry.local';
const PASSWORD = 'wonderland';
const WRONG = 'not-the-password-7f3a';

type Metrics = Map<string, number>;

/** Parses the text exposition format: `name{labels} value` per line, comments skipped. */
function parseMetrics(text: string): Metrics {
  const out: Metrics = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describeWithPeers('the demo app, watched through /metrics and its pino log lines', [program('redis-server')], () => {
  let redis: RedisProcess;
  let demo: ChildProcess;
  let stateDir: string;
  let base = '';
  let stdout = '';
  /** What the demo printed, up to its last complete line (a batch of lines may arrive in two reads). */
  const completeLines = (): string[] => stdout.slice(0, stdout.lastIndexOf('\n')).split('\n');
  /** Every secret the flow handles: none may reach a log line. */
  const secrets: string[] = [PASSWORD, WRONG];
  let aliceToken = '';
  let refreshToken = '';

  const scrape = async (): Promise<Metrics> => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.text());
  };
  const value = (m: Metrics, series: string): number => m.get(series) ?? 0;
  /** How much each series moved while `action` ran, read from two scrapes. */
  const moved = async (series: string[], action: () => Promise<void>): Promise<Record<string, number>> => {
    const before = await scrape();
    await action();
    const after = await scrape();
    return Object.fromEntries(series.map((s) => [s, value(after, s) - value(before, s)]));
  };
  const token = (form: Record<string, string>) =>
    fetch(`${base}/token`, { method: 'POST', body: new URLSearchParams({ service: SERVICE, client_id: 'spec', ...form }) });
  const login = (username: string, password: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'password', username, password, ...extra });

  beforeAll(async () => {
    redis = await startRedisProcess();
    stateDir = mkdtempSync(join(tmpdir(), 'dockgate-observability-'));
    demo = spawn(process.execPath, [
      MAIN, '--port', '0', '--runtime', 'process', '--redis', redis.url, '--log-level', 'debug',
      '--engine-socket', join(stateDir, 'engine.sock'), '--state-dir', stateDir,
      // Over TCP the process runtime is the administrators' alone (it cannot contain a tenant).
      '--engine-admins', 'alice',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    demo.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    demo.stderr!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    expect(await until(async () => /Ctrl-C stops the demo/.test(stdout), 20_000)).toBe(true);
    base = /http:\/\/127\.0\.0\.1:\d+/.exec(stdout)![0];
  });

  afterAll(async () => {
    if (demo && demo.exitCode === null) {
      const exited = new Promise((r) => demo.once('exit', r));
      demo.kill('SIGTERM');
      await exited;
    }
    await redis?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  describe('a login counts one token issued (grant type, service) and one refresh token created', () => {
    test('password grant with access_type=offline', async () => {
      const delta = await moved([
        `dockgate_tokens_issued_total{grant_type="password",service="${SERVICE}"}`,
        'dockgate_refresh_tokens_total{event="created"}',
        'dockgate_grant_duration_seconds_count{grant_type="password",result="ok"}',
      ], async () => {
        const res = await login('alice', PASSWORD, { access_type: 'offline', scope: 'repository:alice/hello:pull engine:api:read,write' });
        expect(res.status).toBe(200);
        const body = await res.json() as { access_token: string; refresh_token: string };
        aliceToken = body.access_token;
        refreshToken = body.refresh_token;
        secrets.push(aliceToken, refreshToken);
      });
      expect(Object.values(delta)).toEqual([1, 1, 1]);
    });
  });

  describe('a refresh counts a token issued by refresh_token and a refresh token used', () => {
    test('refresh_token grant', async () => {
      const delta = await moved([
        `dockgate_tokens_issued_total{grant_type="refresh_token",service="${SERVICE}"}`,
        'dockgate_refresh_tokens_total{event="used"}',
        'dockgate_refresh_tokens_total{event="created"}',
      ], async () => {
        const res = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, scope: 'repository:alice/hello:pull' });
        expect(res.status).toBe(200);
        secrets.push((await res.json() as { access_token: string }).access_token);
      });
      expect(Object.values(delta)).toEqual([1, 1, 0]);
    });
  });

  describe('a refusal is counted by its OAuth error code', () => {
    test('a wrong password is invalid_grant, an unknown service invalid_request', async () => {
      const delta = await moved([
        'dockgate_token_refusals_total{error="invalid_grant"}',
        'dockgate_token_refusals_total{error="invalid_request"}',
        'dockgate_grant_duration_seconds_count{grant_type="password",result="refused"}',
      ], async () => {
        expect((await login('alice', WRONG)).status).toBe(400);
        expect((await token({ grant_type: 'password', username: 'alice', password: PASSWORD, service: 'elsewhere' })).status).toBe(400);
      });
      expect(Object.values(delta)).toEqual([1, 1, 2]);
    });
  });

  describe('a throttled login is counted as throttled and as a slow_down refusal', () => {
    test('the sixth wrong password of one account and address is answered 429', async () => {
      const delta = await moved([
        'dockgate_logins_throttled_total',
        'dockgate_token_refusals_total{error="slow_down"}',
        'dockgate_token_refusals_total{error="invalid_grant"}',
      ], async () => {
        for (let i = 0; i < 5; i += 1) expect((await login('bob', WRONG)).status).toBe(400);
        const throttled = await login('bob', WRONG);
        expect(throttled.status).toBe(429);
        expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
      });
      expect(Object.values(delta)).toEqual([1, 1, 5]);
    });
  });

  describe('bearer checks are counted by result', () => {
    test('ok, insufficient_scope, invalid_token and missing', async () => {
      const get = (path: string, auth?: string) => fetch(`${base}${path}`, auth ? { headers: { authorization: auth } } : {});
      const delta = await moved([
        'dockgate_bearer_checks_total{result="ok"}',
        'dockgate_bearer_checks_total{result="insufficient_scope"}',
        'dockgate_bearer_checks_total{result="invalid_token"}',
        'dockgate_bearer_checks_total{result="missing"}',
      ], async () => {
        expect((await get('/v2/alice/hello/tags/list', `Bearer ${aliceToken}`)).status).toBe(200);
        expect((await get('/v2/bob/tools/tags/list', `Bearer ${aliceToken}`)).status).toBe(401);
        expect((await get('/v2/alice/hello/tags/list', 'Bearer not.a.jwt')).status).toBe(401);
        expect((await get('/v2/alice/hello/tags/list')).status).toBe(401);
      });
      expect(Object.values(delta)).toEqual([1, 1, 1, 1]);
    });
  });

  describe('engine requests are counted by route pattern, served version and status; never by raw path', () => {
    test('a list and an unknown container', async () => {
      const auth = { authorization: `Bearer ${aliceToken}` };
      expect((await fetch(`${base}/engine/v1.28/containers/json`, { headers: auth })).status).toBe(200);
      expect((await fetch(`${base}/engine/v1.28/containers/deadbeef1234/json`, { headers: auth })).status).toBe(404);
      const text = await (await fetch(`${base}/metrics`)).text();
      const m = parseMetrics(text);
      expect(value(m, 'dockgate_engine_requests_total{route="/containers/json",version="1.28",status="200"}')).toBeGreaterThanOrEqual(1);
      expect(value(m, 'dockgate_engine_requests_total{route="/containers/:id/json",version="1.28",status="404"}')).toBeGreaterThanOrEqual(1);
      expect(value(m, 'dockgate_engine_request_duration_seconds_count{route="/containers/json"}')).toBeGreaterThanOrEqual(1);
      expect(text).not.toContain('deadbeef1234');
      expect(m.has('dockgate_running_containers{runtime="process"}')).toBe(true);
    });
  });

  describe('log lines dropped because stdout fell behind are counted (the log buffer is bounded)', () => {
    test('the counter is served, at 0 while stdout is read', async () => {
      const m = await scrape();
      expect(m.get('dockgate_demo_log_lines_dropped_total')).toBe(0);
    });
  });

  describe('one log line per container lifecycle event', () => {
    test('create, start and die of a container, with its name and image, never its command', async () => {
      const headers = { authorization: `Bearer ${aliceToken}`, 'content-type': 'application/json' };
      const name = `obs-${process.pid}`;
      const created = await fetch(`${base}/engine/v1.28/containers/create?name=${name}`, {
        method: 'POST', headers, body: JSON.stringify({ Image: 'busybox', Cmd: ['echo', 'secret-argument-91'] }),
      });
      expect(created.status).toBe(201);
      const { Id: id } = await created.json() as { Id: string };
      expect((await fetch(`${base}/engine/v1.28/containers/${id}/start`, { method: 'POST', headers })).status).toBe(204);
      expect(await until(async () => completeLines().some((l) => l.includes('"event":"container.die"')), 10_000)).toBe(true);
      const lines = completeLines().filter((l) => l.includes('"event":"container.')).map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const action of ['create', 'start', 'die']) {
        expect(lines).toContainEqual(expect.objectContaining({ event: `container.${action}`, container: id.slice(0, 12), name, image: expect.stringContaining('busybox') }));
      }
      expect(lines.find((l) => l.event === 'container.die')).toEqual(expect.objectContaining({ exit_code: 0 }));
      expect(stdout).not.toContain('secret-argument-91');
      expect((await fetch(`${base}/engine/v1.28/containers/${id}`, { method: 'DELETE', headers })).status).toBe(204);
    });
  });

  describe('a store outage: refresh-token store failures counted, the client told temporarily_unavailable', () => {
    test('with its Redis stopped, a refresh is 503 and both stores count failures', async () => {
      await redis.stop();
      const delta = await moved([
        'dockgate_backend_failures_total{backend="refresh_store"}',
        'dockgate_token_refusals_total{error="temporarily_unavailable"}',
      ], async () => {
        const res = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
        expect(res.status).toBe(503);
        expect((await res.json() as { error: string }).error).toBe('temporarily_unavailable');
      });
      expect(Object.values(delta)).toEqual([1, 1]);
      // The throttle fails open to this instance's memory: the login goes on, the failure is counted.
      const before = value(await scrape(), 'dockgate_backend_failures_total{backend="throttle_store"}');
      expect((await login('alice', PASSWORD)).status).toBe(200);
      expect(value(await scrape(), 'dockgate_backend_failures_total{backend="throttle_store"}')).toBeGreaterThan(before);
    });
  });

  describe('log lines: one JSON line per token decision with a request id, and no secret at any level', () => {
    test('every decision line names subject, client_id, service, result, address and request id', async () => {
      // The demo writes its lines in batches, the last ones within LOG_FLUSH_MS (demo/log-destination.ts):
      // read complete lines only, and give the last batch its flush.
      const decisionLines = () => completeLines().filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => typeof l.event === 'string' && !(l.event as string).startsWith('container.'));
      expect(await until(async () => decisionLines().length >= 12, 5_000)).toBe(true);
      const decisions = decisionLines();
      expect(decisions.length).toBeGreaterThanOrEqual(12);
      for (const line of decisions) {
        expect(line).toEqual(expect.objectContaining({ subject: expect.any(String), result: expect.any(String), ip: expect.any(String), reqId: expect.any(String) }));
      }
      const issued = decisions.find((l) => l.event === 'token.issued' && l.grant_type === 'password');
      expect(issued).toEqual(expect.objectContaining({ subject: 'alice', client_id: 'spec', service: SERVICE, scope: expect.stringContaining('repository:alice/hello:pull'), result: 'ok' }));
      expect(decisions.some((l) => l.event === 'login.throttled' && l.result === 'slow_down')).toBe(true);
    });

    test('no password, access token or refresh token appears in any line, even at debug level', () => {
      // The log lines only: the start-up banner shows the demo's own sample credentials on purpose.
      const log = stdout.slice(stdout.indexOf('Ctrl-C stops the demo.'));
      expect(log.split('\n').filter((l) => l.startsWith('{')).length).toBeGreaterThanOrEqual(15);
      expect(secrets.length).toBeGreaterThanOrEqual(5);
      for (const secret of secrets) expect(log).not.toContain(secret);
      // Nor a recognisable piece of a token (its signature part) or the Authorization header.
      for (const jwt of secrets.filter((s) => s.split('.').length === 3)) expect(log).not.toContain(jwt.split('.')[2]!);
      expect(log.toLowerCase()).not.toContain('bearer ');
    });
  });
});
