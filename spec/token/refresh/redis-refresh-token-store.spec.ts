import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { type RefreshTokenRecord } from '../../../lib/token/index.js';
import { generateRefreshToken, refreshTokenId } from '../../../lib/token/refresh/refresh-token.js';
import { RedisRefreshTokenStore } from '../../../lib/redis/index.js';
import keySlot from 'cluster-key-slot';
import { BUCKETS, bucketOf, RedisKeyLayout } from '../../../lib/token/refresh/redis-key-layout.js';
import { describeWithPeers, redis } from '../../support/peers.js';

const URL = 'redis://127.0.0.1:6379';
const DAY = 86_400_000;

function record(subject: string, overrides: Partial<RefreshTokenRecord> = {}): { token: string; record: RefreshTokenRecord } {
  const token = generateRefreshToken();
  const now = Date.now();
  return {
    token,
    record: {
      id: refreshTokenId(token), subject, service: 'registry.local', clientId: 'docker',
      createdAt: now, expiresAt: now + 90 * DAY, idleExpiresAt: now + 30 * DAY, ...overrides,
    },
  };
}

describeWithPeers('RedisRefreshTokenStore', [redis()], () => {
  // A prefix per run keeps these keys apart from other specs and runs sharing the server.
  const prefix = `spec:${randomBytes(6).toString('hex')}:`;
  let store: RedisRefreshTokenStore;
  let other: RedisRefreshTokenStore;
  let inspect: Redis;
  // Keys of the bucketed layout, found the way an operator would: by pattern.
  const tokenKey = async (id: string) => (await inspect.keys(`${prefix}{*}:token:${id}`))[0] ?? `${prefix}<none>:token:${id}`;
  const subjectKeys = (subject: string) => inspect.keys(`${prefix}{*}:subject:${subject}`);
  const subjectMembers = async (subject: string) => (await Promise.all((await subjectKeys(subject)).map((k) => inspect.smembers(k)))).flat();

  beforeAll(() => {
    store = new RedisRefreshTokenStore({ url: URL, keyPrefix: prefix });
    other = new RedisRefreshTokenStore({ url: URL, keyPrefix: prefix });
    inspect = new Redis(URL);
  });

  afterAll(async () => {
    const keys = await inspect.keys(`${prefix}*`);
    if (keys.length > 0) await inspect.del(...keys);
    await Promise.all([store.close(), other.close(), inspect.quit()]);
  });

  describe('a token is stored only as its SHA-256, with its binding', () => {
    test('no key or value holds the token itself; the record comes back whole', async () => {
      const { token, record: r } = record('alice', { labels: { group: ['dev', 'ops'] } });
      await store.save(r);
      const keys = await inspect.keys(`${prefix}*`);
      expect(keys).toContain(await tokenKey(r.id));
      expect(await tokenKey(r.id)).toMatch(new RegExp(`^${prefix}\\{[0-9a-z]+\\}:token:${r.id}$`));
      for (const key of keys) {
        expect(key).not.toContain(token);
        const type = await inspect.type(key);
        const values = type === 'hash' ? Object.values(await inspect.hgetall(key)) : await inspect.smembers(key);
        for (const v of values) expect(v).not.toContain(token.slice(4));
      }
      const used = await store.use(r.id, Date.now(), 30 * DAY);
      expect(used).toEqual({ ...r, idleExpiresAt: expect.any(Number) });
    });

    test('the key prefix option decides where keys live', async () => {
      const { record: r } = record('prefix-user');
      await store.save(r);
      expect(await inspect.exists(await tokenKey(r.id), ...(await subjectKeys('prefix-user')))).toBe(2);
      expect(await inspect.keys(`dockgate:rt:*${r.id}`)).toEqual([]);
    });
  });

  describe('expiry is the key TTL: min(idle, absolute) remaining, so nothing needs sweeping', () => {
    test('a new token lives until its idle expiry', async () => {
      const { record: r } = record('ttl-user');
      await store.save(r);
      const ttl = await inspect.pttl(await tokenKey(r.id));
      expect(ttl).toBeGreaterThan(30 * DAY - 5_000);
      expect(ttl).toBeLessThanOrEqual(30 * DAY);
    });

    test('use moves the idle expiry and the TTL, never past the absolute expiry', async () => {
      const now = Date.now();
      const { record: r } = record('ttl-user', { expiresAt: now + 10 * 60_000, idleExpiresAt: now + 60_000 });
      await store.save(r);
      const used = await other.use(r.id, now, 5 * 60_000);
      expect(used?.idleExpiresAt).toBe(now + 5 * 60_000);
      expect(await inspect.pttl(await tokenKey(r.id))).toBeGreaterThan(4 * 60_000);
      const capped = await store.use(r.id, now, 60 * 60_000);
      expect(capped?.idleExpiresAt).toBe(r.expiresAt);
      expect(await inspect.pttl(await tokenKey(r.id))).toBeLessThanOrEqual(10 * 60_000);
    });

    test('a token whose TTL ran out is gone', async () => {
      const now = Date.now();
      const { record: r } = record('short-user', { expiresAt: now + 150, idleExpiresAt: now + 150 });
      await store.save(r);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await inspect.keys(`${prefix}*${r.id}`)).toEqual([]);
      expect(await store.use(r.id, Date.now(), 60_000)).toBeNull();
    });

    test('a token already dead at save time is not recorded', async () => {
      const now = Date.now();
      const { record: r } = record('dead-user', { expiresAt: now - 1, idleExpiresAt: now - 1 });
      await store.save(r);
      expect(await inspect.keys(`${prefix}*${r.id}`)).toEqual([]);
    });

    test('a caller whose clock is past the expiry gets null and the record is deleted', async () => {
      const { record: r } = record('clock-user');
      await store.save(r);
      expect(await store.use(r.id, r.idleExpiresAt, 60_000)).toBeNull();
      expect(await inspect.keys(`${prefix}*${r.id}`)).toEqual([]);
    });

    test('an unknown id is null', async () => {
      expect(await store.use(refreshTokenId('dgr_unknown'), Date.now(), 60_000)).toBeNull();
    });
  });

  describe('revoke removes one token, everywhere', () => {
    test('revoked at one instance, refused by another; a second revoke finds nothing', async () => {
      const a = record('bob');
      const b = record('bob');
      await store.save(a.record);
      await store.save(b.record);
      expect(await other.revoke(a.record.id)).toBe(true);
      expect(await store.use(a.record.id, Date.now(), 60_000)).toBeNull();
      expect(await store.revoke(a.record.id)).toBe(false);
      expect(await store.use(b.record.id, Date.now(), 60_000)).not.toBeNull();
      expect(await subjectMembers('bob')).toEqual([b.record.id]);
    });
  });

  describe('revokeSubject removes every token of one subject and no other', () => {
    test('counts the live tokens it revoked and leaves other subjects alone', async () => {
      const mine = [record('carol'), record('carol'), record('carol')];
      const theirs = record('dave');
      for (const t of [...mine, theirs]) await store.save(t.record);
      expect(await other.revokeSubject('carol')).toBe(3);
      for (const t of mine) expect(await store.use(t.record.id, Date.now(), 60_000)).toBeNull();
      expect(await store.use(theirs.record.id, Date.now(), 60_000)).not.toBeNull();
      expect(await store.revokeSubject('carol')).toBe(0);
      expect(await subjectKeys('carol')).toEqual([]);
    });

    test('the subject set lives as long as its longest-lived token', async () => {
      const now = Date.now();
      // Two tokens of one bucket share its subject set.
      let first = record('erin', { expiresAt: now + 5 * DAY, idleExpiresAt: now + DAY });
      let second = record('erin', { expiresAt: now + 2 * DAY, idleExpiresAt: now + DAY });
      while (bucketOf(second.record.id) !== bucketOf(first.record.id)) second = record('erin', { expiresAt: now + 2 * DAY, idleExpiresAt: now + DAY });
      await store.save(first.record);
      await store.save(second.record);
      expect(await subjectKeys('erin')).toHaveLength(1);
      const ttl = await inspect.pttl((await subjectKeys('erin'))[0] as string);
      expect(ttl).toBeGreaterThan(5 * DAY - 5_000);
      expect(ttl).toBeLessThanOrEqual(5 * DAY);
    });

    test('ids of expired tokens are pruned from the subject set by later saves', async () => {
      const now = Date.now();
      // All in one bucket: pruning looks at the set the save writes to.
      const inBucket = (overrides: Partial<RefreshTokenRecord> = {}) => {
        let r = record('frank', overrides);
        while (bucketOf(r.record.id) !== 0) r = record('frank', overrides);
        return r.record;
      };
      for (let i = 0; i < 3; i++) await store.save(inBucket({ expiresAt: now + 100, idleExpiresAt: now + 100 }));
      await new Promise((resolve) => setTimeout(resolve, 250));
      for (let i = 0; i < 4; i++) await store.save(inBucket());
      expect(await subjectMembers('frank')).toHaveLength(4);
    });

    test('racing saves at one instance and revocations at another leave every live token in its subject set', async () => {
      const saves = Array.from({ length: 200 }, () => record('grace'));
      const revocations: Promise<number>[] = [];
      await Promise.all(saves.map(async (t, i) => {
        if (i % 40 === 0) revocations.push(other.revokeSubject('grace'));
        await store.save(t.record);
      }));
      await Promise.all(revocations);
      const members = new Set(await subjectMembers('grace'));
      const live = new Set((await inspect.keys(`${prefix}{*}:token:*`)).map((k) => k.split(':token:')[1]));
      for (const t of saves) {
        if (live.has(t.record.id)) expect(members.has(t.record.id)).toBe(true);
      }
      await other.revokeSubject('grace');
      const left = new Set((await inspect.keys(`${prefix}{*}:token:*`)).map((k) => k.split(':token:')[1]));
      for (const t of saves) expect(left.has(t.record.id)).toBe(false);
    });
  });

  describe('a subject keeps at most maxPerSubject live tokens: the oldest beyond it are revoked (sorted set, O(log n) per save)', () => {
    test('the fourth token of a cap of 3 revokes the first, at whichever instance saves it', async () => {
      const tokens = Array.from({ length: 4 }, () => record('hana'));
      const theirs = record('hugo');
      await store.save(theirs.record, 3);
      for (const [i, t] of tokens.entries()) await (i % 2 ? other : store).save(t.record, 3);
      expect(await store.use(tokens[0]!.record.id, Date.now(), 60_000)).toBeNull();
      for (const t of tokens.slice(1)) expect(await store.use(t.record.id, Date.now(), 60_000)).not.toBeNull();
      expect(await store.use(theirs.record.id, Date.now(), 60_000)).not.toBeNull();
      const counted = `${prefix}{s:hana}:tokens`;
      expect(await inspect.zcard(counted)).toBe(3);
      expect(await inspect.zrange(counted, 0, -1)).toEqual(tokens.slice(1).map((t) => t.record.id));
      expect(await inspect.pttl(counted)).toBeGreaterThan(89 * DAY);
      expect(await subjectMembers('hana')).not.toContain(tokens[0]!.record.id);
    });

    test('tokens saved within one millisecond: the newest is never the one popped', async () => {
      const at = Date.now();
      const tokens = Array.from({ length: 5 }, () => record('jana', { createdAt: at }));
      for (const t of tokens) await store.save(t.record, 2);
      const live = [];
      for (const t of tokens) if (await store.use(t.record.id, Date.now(), 60_000)) live.push(t.record.id);
      expect(live).toEqual(tokens.slice(3).map((t) => t.record.id));
    });

    test('a revoked token leaves the count; revokeSubject removes the count', async () => {
      const [a, b] = [record('kim'), record('kim')];
      await store.save(a.record, 5);
      await store.save(b.record, 5);
      await other.revoke(a.record.id);
      expect(await inspect.zrange(`${prefix}{s:kim}:tokens`, 0, -1)).toEqual([b.record.id]);
      expect(await store.revokeSubject('kim')).toBe(1);
      expect(await inspect.exists(`${prefix}{s:kim}:tokens`)).toBe(0);
    });

    test('the count is one key: each save touches it with one script (ZADD, ZCARD, ZPOPMIN), not a scan', async () => {
      for (let i = 0; i < 50; i++) await store.save(record('lena').record, 10);
      expect(await inspect.zcard(`${prefix}{s:lena}:tokens`)).toBe(10);
      const live = (await inspect.keys(`${prefix}{*}:subject:lena`)).length;
      expect(live).toBeGreaterThan(0);
      expect((await subjectMembers('lena')).length).toBeLessThanOrEqual(10 + 3 * 64);
    });
  });

  describe('keys carry hash tags: each script stays in one cluster slot, and tokens spread over 64 slots', () => {
    test('a token key shares its slot with its subject set; 400 tokens of one subject land in (nearly) every bucket', async () => {
      const saved = Array.from({ length: 400 }, () => record('ivan'));
      await Promise.all(saved.map((t) => store.save(t.record)));
      const subjectKeysOfIvan = await subjectKeys('ivan');
      expect(subjectKeysOfIvan.length).toBeGreaterThanOrEqual(BUCKETS - 4);
      const subjectSlots = new Set(subjectKeysOfIvan.map((k) => keySlot(k)));
      for (const t of saved.slice(0, 50)) expect(subjectSlots.has(keySlot(await tokenKey(t.record.id)))).toBe(true);
      expect(await other.revokeSubject('ivan')).toBe(400);
    });

    test('the 64 buckets\' tags fall one in each 1/64 of the slot range (even spread over equal masters)', () => {
      const layout = new RedisKeyLayout(prefix);
      const shares = Array.from({ length: BUCKETS }, (_, b) => Math.floor((keySlot(layout.tokenPrefix(b)) * BUCKETS) / 16384));
      expect(new Set(shares).size).toBe(BUCKETS);
    });
  });

  describe('tokens saved by dockgate 0.1 (one-slot layout) stay readable until they expire', () => {
    const saveLegacy = async (r: RefreshTokenRecord) => {
      await inspect.hset(`${prefix}token:${r.id}`, {
        subject: r.subject, service: r.service, clientId: r.clientId, labels: '',
        createdAt: String(r.createdAt), expiresAt: String(r.expiresAt), idleExpiresAt: String(r.idleExpiresAt),
      });
      await inspect.pexpire(`${prefix}token:${r.id}`, r.idleExpiresAt - Date.now());
      await inspect.sadd(`${prefix}subject:${r.subject}`, r.id);
    };

    test('use, revoke and revokeSubject find legacy keys', async () => {
      const a = record('judy');
      const b = record('judy');
      await saveLegacy(a.record);
      await saveLegacy(b.record);
      await store.save(record('judy').record);
      expect((await store.use(a.record.id, Date.now(), 60_000))?.subject).toBe('judy');
      expect(await other.revoke(a.record.id)).toBe(true);
      expect(await store.use(a.record.id, Date.now(), 60_000)).toBeNull();
      expect(await store.revokeSubject('judy')).toBe(2);
      expect(await inspect.exists(`${prefix}token:${b.record.id}`)).toBe(0);
    });

    test('legacyKeys: false looks only at the current layout', async () => {
      const strict = new RedisRefreshTokenStore({ url: URL, keyPrefix: prefix, legacyKeys: false });
      try {
        const a = record('kim');
        await saveLegacy(a.record);
        expect(await strict.use(a.record.id, Date.now(), 60_000)).toBeNull();
        expect(await strict.revoke(a.record.id)).toBe(false);
        expect(await store.use(a.record.id, Date.now(), 60_000)).not.toBeNull();
      } finally {
        await strict.close();
      }
    });
  });

  describe('a client given by the host is used as it is', () => {
    test('works, and close() leaves it open', async () => {
      const client = new Redis(URL, { enableOfflineQueue: false, commandTimeout: 1000 });
      await new Promise((resolve) => client.once('ready', resolve));
      const shared = new RedisRefreshTokenStore({ client, keyPrefix: prefix });
      const { record: r } = record('henry');
      await shared.save(r);
      expect((await store.use(r.id, Date.now(), 60_000))?.subject).toBe('henry');
      await shared.close();
      expect(await client.ping()).toBe('PONG');
      await client.quit();
    });
  });
});

describe('RedisRefreshTokenStore fails fast while Redis is unreachable', () => {
  test('a store call rejects within about its command timeout instead of queueing', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    const errors: Error[] = [];
    const store = new RedisRefreshTokenStore({ url: `redis://127.0.0.1:${port}`, commandTimeout: 300, onConnectionError: (e) => errors.push(e) });
    const started = Date.now();
    await expect(store.save(record('nobody').record)).rejects.toThrow();
    await expect(store.use('0'.repeat(64), Date.now(), 60_000)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(errors.length).toBe(1);
    await store.close();
  });
});

describe('RedisRefreshTokenStore options are validated at construction', () => {
  test.each([
    [{}, /exactly one of "url", "cluster" and "client"/],
    [{ cluster: [] }, /"cluster"/],
    [{ cluster: ['localhost'] }, /"cluster" must hold "host:port"/],
    [{ url: URL, keyPrefix: 'app:{x}:' }, /"keyPrefix" must not hold/],
    [{ url: URL, legacyKeys: 'yes' }, /"legacyKeys"/],
    [{ url: 'http://x' }, /"url"/],
    [{ url: URL, client: {} }, /exactly one/],
    [{ client: {} }, /"client" must be an ioredis client/],
    [{ client: { defineCommand() {}, options: { keyPrefix: 'x:' } } }, /keyPrefix/],
    [{ url: URL, keyPrefix: '' }, /"keyPrefix"/],
    [{ url: URL, commandTimeout: 0 }, /"commandTimeout"/],
    [{ url: URL, onConnectionError: 'log' }, /"onConnectionError"/],
  ])('%j is a TypeError naming the option', (options, message) => {
    expect(() => new RedisRefreshTokenStore(options as never)).toThrow(TypeError);
    expect(() => new RedisRefreshTokenStore(options as never)).toThrow(message);
  });
});
