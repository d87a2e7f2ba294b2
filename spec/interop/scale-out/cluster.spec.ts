/**
 * Scale-out on Redis Cluster: a real cluster of 3 masters and 3 replicas (redis-server
 * --cluster-enabled yes, redis-cli --cluster create) started here on ports 7100-7105 (bus
 * 27100-27105), and two token-service processes on it, as behind a load balancer.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey } from '../../../lib/index.js';
import { refreshTokenId } from '../../../lib/token/refresh/refresh-token.js';
import { RedisRefreshTokenStore } from '../../../lib/redis/index.js';
import { RedisKeyLayout } from '../../../lib/token/refresh/redis-key-layout.js';
import { describeWithPeers, program } from '../../support/peers.js';
import { until } from '../../support/until.js';
import { startRedisCluster, type RedisCluster } from '../fixtures/redis-topologies.js';
import { keepRefreshing, login, passwordFrom, refresh, revoke, SERVICE, USERS } from '../fixtures/scale-out-client.js';
import { ensureBuiltLibrary, startTokenServerProcess, type TokenServerProcess } from '../fixtures/token-server-process.js';

const key = generateSigningKey({ commonName: 'scale-out cluster signer' });
const PREFIX = `scale-out:${randomBytes(4).toString('hex')}:`;
const LIMIT = 4;

describeWithPeers('two token-service processes on a Redis Cluster of 3 masters and 3 replicas', [program('redis-server'), program('redis-cli')], () => {
  let cluster: RedisCluster;
  let first: TokenServerProcess;
  let second: TokenServerProcess;
  let admin: RedisRefreshTokenStore;
  const layout = new RedisKeyLayout(PREFIX);
  const shardOf = (token: string) => cluster.masterOf(layout.tokenKey(refreshTokenId(token)));

  beforeAll(async () => {
    ensureBuiltLibrary();
    cluster = await startRedisCluster([7100, 7101, 7102, 7103, 7104, 7105], [27100, 27101, 27102, 27103, 27104, 27105]);
    const env = {
      REDIS_CLUSTER: cluster.nodes.join(','), KEY_PREFIX: PREFIX, SIGNING_KEY_PEM: key.privateKeyPem,
      ISSUER: 'dockgate-scale-out', SERVICE, USERS: JSON.stringify(USERS), THROTTLE: JSON.stringify({ maxFailures: LIMIT, windowSeconds: 600 }),
    };
    // Ports from the spec's own range: 7190 and 7191.
    [first, second] = await Promise.all([startTokenServerProcess(7190, env), startTokenServerProcess(7191, env)]);
    // The host's side: what an admin tool calls on a password change.
    admin = new RedisRefreshTokenStore({ cluster: cluster.nodes, keyPrefix: PREFIX, onConnectionError: () => {} });
  }, 90_000);

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop(), admin?.close()]);
    await cluster?.stop();
  });

  describe('a refresh token issued by one instance is used, then revoked, through the other', () => {
    test('issued by the first, refreshed and revoked at the second, refused by the first', async () => {
      const token = await login(first);
      expect((await refresh(second, token)).status).toBe(200);
      expect((await revoke(second, token)).status).toBe(200);
      const refused = await refresh(first, token);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_grant');
    });
  });

  describe('revokeSubject reaches a subject\'s tokens on every shard', () => {
    test('24 tokens of bob spread over all 3 masters; one revokeSubject revokes all of them, and no other subject\'s', async () => {
      const tokens = await Promise.all(Array.from({ length: 24 }, (_, i) => login(i % 2 ? first : second, 'bob')));
      const alices = await login(first, 'alice');
      const shards = new Set(await Promise.all(tokens.map(shardOf)));
      expect(shards).toEqual(new Set(await cluster.masters()));
      expect(await admin.revokeSubject('bob')).toBe(24);
      for (const [i, token] of tokens.entries()) {
        const res = await refresh(i % 2 ? second : first, token, 'bob');
        expect(res.status).toBe(400);
      }
      expect((await refresh(second, alices)).status).toBe(200);
    });
  });

  describe('failed logins split between the two instances are throttled at the configured limit, not twice it', () => {
    test(`wrong passwords alternating between instances: ${LIMIT} are judged, then both answer 429, even to the right password`, async () => {
      const address = '198.51.100.7';
      for (let i = 0; i < LIMIT; i++) {
        const res = await passwordFrom(i % 2 ? second : first, address, 'alice', 'guess');
        expect(res.status).toBe(400);
      }
      for (const server of [first, second]) {
        const res = await passwordFrom(server, address, 'alice', 'wonderland');
        expect(res.status).toBe(429);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(500);
      }
      // Another address is not locked out.
      expect((await passwordFrom(first, '198.51.100.8', 'alice', 'wonderland')).status).toBe(200);
    });

    test(`12 wrong passwords at once, split between the instances: exactly ${LIMIT} are judged`, async () => {
      const address = '198.51.100.9';
      const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => passwordFrom(i % 2 ? second : first, address, 'bob', 'guess').then((r) => r.status)));
      expect(statuses.filter((s) => s === 400)).toHaveLength(LIMIT);
      expect(statuses.filter((s) => s === 429)).toHaveLength(12 - LIMIT);
    });
  });

  const demoMain = join(process.cwd(), 'demo/dist/main.js');
  describeWithPeers('the demo with --redis-cluster shares refresh tokens through the cluster', [
    { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(demoMain) },
  ], () => {
    test('the banner names the cluster; a refresh token from the demo\'s login is stored there and refreshed', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dockgate-demo-cluster-'));
      const child = spawn(process.execPath, [demoMain, '--port', '7194', '--engine-socket', join(dir, 'e.sock'), '--state-dir', join(dir, 'state'),
        '--redis-cluster', cluster.nodes.slice(0, 2).join(',')], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
      child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        expect(await until(async () => out.includes('Ctrl-C stops the demo.'), 15_000)).toBe(true);
        expect(out).toContain('refresh tokens   Redis Cluster (127.0.0.1:7100, 127.0.0.1:7101)');
        const base = 'http://127.0.0.1:7194';
        const basic = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
        const login = await (await fetch(`${base}/token?service=registry.local&offline_token=true&client_id=docker`, { headers: { authorization: basic } })).json() as { refresh_token: string };
        const form = { grant_type: 'refresh_token', refresh_token: login.refresh_token, service: 'registry.local', client_id: 'docker', scope: 'repository:alice/hello:pull' };
        const refreshed = await fetch(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
        expect(refreshed.status).toBe(200);
        // Stored in the cluster, under the default prefix, on the master of its bucket.
        const demoKeys = new RedisKeyLayout('dockgate:rt:');
        const tokenKey = demoKeys.tokenKey(refreshTokenId(login.refresh_token));
        const probe = new RedisRefreshTokenStore({ cluster: cluster.nodes, onConnectionError: () => {} });
        try {
          expect((await probe.use(refreshTokenId(login.refresh_token), Date.now(), 60_000))?.subject).toBe('alice');
          expect(await probe.revokeSubject('alice')).toBeGreaterThanOrEqual(1);
        } finally {
          await probe.close();
        }
        expect(await cluster.masters()).toContain(await cluster.masterOf(tokenKey));
      } finally {
        child.kill('SIGINT');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('a master killed and its replica promoted: tokens saved before still work, and no request answers 500', () => {
    test('refreshes during the failover answer 200 or 503 (never 500), and every token works at both instances after it', async () => {
      const tokens = await Promise.all(Array.from({ length: 12 }, (_, i) => login(i % 2 ? first : second)));
      await cluster.synced();
      const victim = await shardOf(tokens[0] as string);
      const traffic = keepRefreshing([first, second], tokens);
      const promoted = await cluster.failOver(victim);
      expect((await cluster.masters())).toContain(promoted);
      const recovered = await until(async () => {
        for (const token of tokens) {
          for (const server of [first, second]) if ((await refresh(server, token)).status !== 200) return false;
        }
        return true;
      }, 20_000);
      const statuses = await traffic.stop();
      expect(recovered).toBe(true);
      expect(statuses.filter((s) => s !== '200' && s !== '503 5 temporarily_unavailable')).toEqual([]);
      console.log(`during the failover: ${statuses.length} refreshes, ${statuses.filter((s) => s !== '200').length} answered 503`);
      expect(first.running() && second.running()).toBe(true);
      // New tokens land on the promoted master too.
      const fresh = await login(second);
      expect((await refresh(first, fresh)).status).toBe(200);
    }, 60_000);
  });
});
