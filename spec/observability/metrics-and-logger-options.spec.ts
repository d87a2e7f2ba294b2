/**
 * The `metrics` and `logger` options of tokenRouter, bearerGuard and engineRouter: one option
 * shape, validated at construction, one set of series per registry, and token decisions going
 * to the log, the metrics and the audit hook from one event (one mechanism).
 */
import { describe, expect, test } from '@jest/globals';
import express from 'express';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { register as globalRegistry, Registry } from 'prom-client';
import request from 'supertest';
import { bearerGuard, tokenRouter, type AuditEvent } from '../../lib/index.js';
import { engineRouter } from '../../lib/engine/index.js';
import { scriptedRuntime } from '../../lib/engine/runtime/scripted/index.js';
import { basic, ecKey, ISSUER, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

const keys = { privateKey: ecKey.privateKeyPem, certificateChain: ecKey.certificatePem };

/** A pino logger at debug level whose lines are kept in memory. */
function capturedLogger(): { logger: pino.Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  let text = '';
  const stream = new Writable({ write(chunk, _enc, done) { text += chunk.toString(); done(); } });
  const logger = pino({ level: 'debug' }, stream);
  return { logger, text: () => text, lines: () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('one metrics option shape, validated once at construction', () => {
  test('a bad registry or prefix is a TypeError naming the option, for each router', () => {
    expect(() => tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, metrics: { registry: {} as Registry } }))
      .toThrow(/tokenRouter option "metrics.registry"/);
    expect(() => tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, metrics: { prefix: 'bad prefix' } }))
      .toThrow(/"metrics.prefix"/);
    const tokens = tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true });
    expect(() => bearerGuard({ realm: 'http://x/token', keys: tokens, metrics: 'yes' as never })).toThrow(/bearerGuard option "metrics"/);
    expect(() => engineRouter(scriptedRuntime({ images: { 'busybox:latest': () => ({ stdout: '' }) } }), undefined, { logger: {} as never })).toThrow(/engineRouter option "logger"/);
  });

  test('a token router, a bearer guard and an engine router on one registry share one set of series (no double registration)', async () => {
    const registry = new Registry();
    const tokens = tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, metrics: { registry } });
    const again = tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, metrics: { registry } });
    bearerGuard({ realm: 'http://x/token', keys: tokens, metrics: { registry } });
    engineRouter(scriptedRuntime({ images: { 'busybox:latest': () => ({ stdout: '' }) } }), undefined, { metrics: { registry } });
    const app = express().use(tokens).use('/again', again);
    await request(app).get('/token').query({ service: SERVICE }).expect(200);
    await request(app).get('/again/token').query({ service: SERVICE }).expect(200);
    expect(await registry.getSingleMetricAsString('dockgate_tokens_issued_total'))
      .toContain(`dockgate_tokens_issued_total{grant_type="anonymous",service="${SERVICE}"} 2`);
  });

  test('a prefix makes a separate set on the same registry; `metrics: {}` registers in prom-client\'s default one', async () => {
    const registry = new Registry();
    tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, metrics: { registry, prefix: 'edge_' } });
    expect(registry.getSingleMetric('edge_tokens_issued_total')).toBeDefined();
    expect(registry.getSingleMetric('dockgate_tokens_issued_total')).toBeUndefined();
    tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, metrics: {} });
    expect(globalRegistry.getSingleMetric('dockgate_tokens_issued_total')).toBeDefined();
    globalRegistry.clear();
  });
});

describe('token decisions: one event feeds the log line, the metrics and the audit hook', () => {
  test('each decision is one line and one audit event, the same decisions in the same order', async () => {
    const { logger, lines } = capturedLogger();
    const token = tokenApp({ logger });
    await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' })).expect(200);
    await request(token.app).post('/token').type('form').send(passwordGrant({ password: 'wrong' })).expect(400);
    await request(token.app).post('/token').type('form').send(passwordGrant({ service: 'other' })).expect(400);
    const logged = lines().map((l) => l.event);
    expect(logged).toEqual(['token.issued', 'login.failed', 'request.refused']);
    expect(token.audit.map((e: AuditEvent) => e.type)).toEqual(logged);
    expect(token.audit[1]).toEqual(expect.objectContaining({ error: 'invalid_grant' }));
  });

  test('a request\'s own `req.log` child (the host\'s request id) writes its line', async () => {
    const { logger, lines } = capturedLogger();
    const router = tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, logger });
    const app = express();
    app.use((req, _res, next) => { (req as unknown as { log: pino.Logger }).log = logger.child({ reqId: 'r-42' }); next(); });
    app.use(router);
    await request(app).get('/token').query({ service: SERVICE }).expect(200);
    expect(lines()).toEqual([expect.objectContaining({ reqId: 'r-42', event: 'token.issued', grant_type: 'anonymous', result: 'ok' })]);
  });

  test('the line\'s address is req.ip: behind a trusted proxy, the client named in X-Forwarded-For', async () => {
    const { logger, lines } = capturedLogger();
    const router = tokenRouter({ issuer: ISSUER, service: SERVICE, keys, allowAnonymous: true, logger });
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(router);
    await request(app).get('/token').query({ service: SERVICE }).set('X-Forwarded-For', '203.0.113.7').expect(200);
    const untrusted = express().use(router);
    await request(untrusted).get('/token').query({ service: SERVICE }).set('X-Forwarded-For', '203.0.113.7').expect(200);
    expect(lines().map((l) => l.ip)).toEqual(['203.0.113.7', expect.stringMatching(/127\.0\.0\.1/)]);
  });

  test('no password, access token or refresh token in any line at debug level, whatever the outcome', async () => {
    const { logger, text } = capturedLogger();
    const token = tokenApp({ logger, throttle: { maxFailures: 2 } });
    const issued = await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' })).expect(200);
    const refreshed = await request(token.app).post('/token').type('form')
      .send({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, service: SERVICE, client_id: 'spec' }).expect(200);
    for (let i = 0; i < 3; i += 1) await request(token.app).post('/token').type('form').send(passwordGrant({ password: `guess-${i}-secret` }));
    await request(token.app).get('/token').query({ service: SERVICE }).set('Authorization', basic('bob', 'basic-secret-pw')).expect(401);
    await request(token.app).post('/revoke').type('form').send({ token: issued.body.refresh_token }).expect(200);
    const log = text();
    expect(log).toContain('refresh_token.revoked');
    expect(log).toContain('login.throttled');
    for (const secret of ['wonderland', 'guess-0-secret', 'guess-2-secret', 'basic-secret-pw', issued.body.refresh_token, issued.body.access_token, refreshed.body.access_token]) {
      expect(log).not.toContain(secret);
    }
  });
});

describe('engine requests are labelled by route pattern and served version, never by raw path', () => {
  test('a matched route, a 404 of an unknown container and an unknown path', async () => {
    const registry = new Registry();
    const app = express().use(engineRouter(scriptedRuntime({ images: { 'busybox:latest': () => ({ stdout: '' }) } }), '1.24-1.28', { metrics: { registry } }));
    await request(app).get('/v1.28/containers/json').expect(200);
    await request(app).get('/v1.25/containers/0123456789ab/json').expect(404);
    await request(app).get('/no/such/path').expect(404);
    const text = await registry.metrics();
    expect(text).toContain('dockgate_engine_requests_total{route="/containers/json",version="1.28",status="200"} 1');
    expect(text).toContain('dockgate_engine_requests_total{route="/containers/:id/json",version="1.25",status="404"} 1');
    expect(text).toContain('dockgate_engine_requests_total{route="unmatched",version="none",status="404"} 1');
    expect(text).toContain('dockgate_engine_request_duration_seconds_count{route="/containers/json"} 1');
    expect(text).not.toContain('0123456789ab');
  });
});
