import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { MemoryRefreshTokenStore, type RefreshTokenRecord } from '../../lib/index.js';
import { basic, SERVICE, tokenApp } from '../support/token-fixture.js';

const record = (id: string, over: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord => ({
  id, subject: 'alice', service: 's', clientId: 'docker', createdAt: 0, expiresAt: 10_000, idleExpiresAt: 1_000, ...over,
});

describe('refresh tokens have idle and absolute expiry', () => {
  test('use() extends the idle expiry, never past the absolute one', async () => {
    const store = new MemoryRefreshTokenStore();
    await store.save(record('a'));
    expect((await store.use('a', 500, 1_000))?.idleExpiresAt).toBe(1_500);
    expect((await store.use('a', 1_400, 1_000))?.idleExpiresAt).toBe(2_400);
    expect((await store.use('a', 9_900, 1_000_000))).toBeNull(); // idle expired at 2_400
  });
  test('a token idle too long is dead', async () => {
    const store = new MemoryRefreshTokenStore();
    await store.save(record('a'));
    expect(await store.use('a', 1_000, 1_000)).toBeNull();
    expect(store.size).toBe(0);
  });
  test('a token past its absolute expiry is dead however recently used', async () => {
    const store = new MemoryRefreshTokenStore();
    await store.save(record('a', { idleExpiresAt: 20_000 }));
    expect(await store.use('a', 10_000, 1_000)).toBeNull();
  });
});

describe('refresh tokens are revocable one by one and per subject', () => {
  test('revoke() removes one token and says whether it existed', async () => {
    const store = new MemoryRefreshTokenStore();
    await store.save(record('a'));
    expect(await store.revoke('a')).toBe(true);
    expect(await store.revoke('a')).toBe(false);
    expect(await store.use('a', 0, 1)).toBeNull();
  });
  test('revokeSubject() removes every token of the account and no other', async () => {
    const store = new MemoryRefreshTokenStore();
    await store.save(record('a'));
    await store.save(record('b'));
    await store.save(record('c', { subject: 'bob' }));
    expect(await store.revokeSubject('alice')).toBe(2);
    expect(await store.use('a', 0, 1)).toBeNull();
    expect(await store.use('c', 0, 1)).not.toBeNull();
  });
});

describe('the memory store is bounded', () => {
  test('when full, expired tokens go first, then the oldest', async () => {
    const store = new MemoryRefreshTokenStore({ maxRecords: 2 });
    await store.save(record('old', { createdAt: 0, expiresAt: Date.now() + 60_000, idleExpiresAt: Date.now() + 60_000 }));
    await store.save(record('mid', { expiresAt: Date.now() + 60_000, idleExpiresAt: Date.now() + 60_000 }));
    await store.save(record('new', { expiresAt: Date.now() + 60_000, idleExpiresAt: Date.now() + 60_000 }));
    expect(store.size).toBe(2);
    expect(await store.use('old', Date.now(), 1000)).toBeNull();
    expect(await store.use('new', Date.now(), 1000)).not.toBeNull();
  });
});

describe('a subject keeps at most maxPerSubject tokens: the oldest beyond it are revoked', () => {
  const live = (over: Partial<RefreshTokenRecord> = {}) => ({ expiresAt: Date.now() + 60_000, idleExpiresAt: Date.now() + 60_000, ...over });
  test('the fourth token of a cap of 3 revokes the first; another subject is untouched', async () => {
    const store = new MemoryRefreshTokenStore();
    await store.save(record('bob-1', live({ subject: 'bob' })), 3);
    for (const id of ['a1', 'a2', 'a3', 'a4']) await store.save(record(id, live()), 3);
    expect(await store.use('a1', Date.now(), 1000)).toBeNull();
    for (const id of ['a2', 'a3', 'a4', 'bob-1']) expect(await store.use(id, Date.now(), 1000)).not.toBeNull();
    expect(store.size).toBe(4);
  });
  test('without a cap nothing is dropped', async () => {
    const store = new MemoryRefreshTokenStore();
    for (let i = 0; i < 50; i++) await store.save(record(`t${i}`, live()));
    expect(store.size).toBe(50);
  });
});

describe('through the token router: refreshTokens.maxPerSubject (default 100) caps each account', () => {
  test('the 101st docker login revokes the account\'s first refresh token', async () => {
    const store = new MemoryRefreshTokenStore();
    const { app } = tokenApp({ refreshTokens: { store } });
    const login = async () => (await request(app).get(`/token?client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'))).body.refresh_token as string;
    const first = await login();
    for (let i = 0; i < 99; i++) await login();
    expect(store.size).toBe(100);
    const refresh = (token: string) => request(app).post('/token').type('form').send({ client_id: 'docker', grant_type: 'refresh_token', refresh_token: token, service: SERVICE });
    expect((await refresh(first)).status).toBe(200);
    const newest = await login();
    expect(store.size).toBe(100);
    expect((await refresh(first)).body).toMatchObject({ error: 'invalid_grant' });
    expect((await refresh(newest)).status).toBe(200);
  });
  test('the option is validated', () => {
    expect(() => tokenApp({ refreshTokens: { maxPerSubject: 0 } })).toThrow('"refreshTokens.maxPerSubject" must be a positive integer');
  });
});
