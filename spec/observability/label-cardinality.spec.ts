/**
 * Metric labels stay a small bounded set whatever the traffic: 10,000 distinct user names log in
 * (one in ten with a wrong password) and present their tokens to a bearer-protected route of their
 * own repository, over real HTTP; the registry then holds the same few series as after one user.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Registry } from 'prom-client';
import { bearerGuard, tokenRouter } from '../../lib/index.js';
import { ecKey, ISSUER, SERVICE } from '../support/token-fixture.js';

const USERS = 10_000;
const CONCURRENCY = 16;

describe('metric label sets stay bounded under 10,000 distinct user names', () => {
  const registry = new Registry();
  let server: Server;
  let base = '';

  beforeAll(async () => {
    const tokens = tokenRouter({
      issuer: ISSUER,
      service: SERVICE,
      keys: { privateKey: ecKey.privateKeyPem, certificateChain: ecKey.certificatePem },
      authenticate: async ({ username, password }) => (password === `pw-${username}` ? { subject: username } : null),
      authorize: ({ account, scopes }) => scopes.filter((s) => s.name.startsWith(`${account}/`)),
      throttle: false,
      metrics: { registry },
    });
    const guard = bearerGuard({ realm: 'http://127.0.0.1:1/token', keys: tokens, metrics: { registry } });
    const app = express();
    app.get('/v2/*name/tags/list', guard((req) => `repository:${(req.params as { name: string[] }).name.join('/')}:pull`), (_req, res) => {
      res.json({ tags: [] });
    });
    app.use(tokens);
    server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  async function oneUser(i: number): Promise<void> {
    const user = `user-${i}-${Math.random().toString(36).slice(2, 8)}`;
    const wrong = i % 10 === 0;
    const res = await fetch(`${base}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password', username: user, password: wrong ? 'nope' : `pw-${user}`, service: SERVICE, client_id: `client-${i}`,
        scope: `repository:${user}/app:pull`, ...(i % 3 === 0 ? { access_type: 'offline' } : {}),
      }),
    });
    const body = await res.json() as { access_token?: string };
    if (wrong) {
      expect(res.status).toBe(400);
      return;
    }
    expect(res.status).toBe(200);
    const checked = await fetch(`${base}/v2/${user}/app/tags/list`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(checked.status).toBe(200);
    // And a refusal of another user's repository.
    expect((await fetch(`${base}/v2/other-${user}/app/tags/list`, { headers: { authorization: `Bearer ${body.access_token}` } })).status).toBe(401);
  }

  test('no label value holds a user name, repository, client id or token; the series count does not grow with users', async () => {
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < USERS) await oneUser(next++);
    }));
    const metrics = await registry.getMetricsAsJSON();
    const series = metrics.flatMap((m) => m.values.map((v) => ({ name: m.name, labels: v.labels })));
    const labelValues = series.flatMap((s) => Object.values(s.labels).map(String));
    expect(labelValues.filter((v) => /user-|client-|repository:|eyJ/.test(v))).toEqual([]);
    const counters = metrics.filter((m) => String(m.type) === 'counter');
    const byName = Object.fromEntries(counters.map((m) => [m.name, m.values.length]));
    expect(byName).toEqual(expect.objectContaining({
      dockgate_tokens_issued_total: 1,
      dockgate_token_refusals_total: 1,
      dockgate_refresh_tokens_total: 1,
      dockgate_bearer_checks_total: 2,
    }));
    // Histograms: one series per bucket per label set, and two label sets (ok, refused).
    expect(series.length).toBeLessThan(100);
    const issued = metrics.find((m) => m.name === 'dockgate_tokens_issued_total')!.values[0]!;
    expect(issued.value).toBe(USERS - USERS / 10);
  }, 240_000);
});
