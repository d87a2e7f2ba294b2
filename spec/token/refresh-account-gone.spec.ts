/**
 * The refresh grant asks the authenticator whether the account still exists (Authenticator.lookup):
 * a removed or disabled account's refresh tokens are refused (invalid_grant) and all revoked.
 */
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import {
  AuthenticatorUnavailableError, chainAuthenticators, htpasswdAuthenticator, htpasswdLine, MemoryRefreshTokenStore,
  type AccountStatus, type Authenticator,
} from '../../lib/index.js';
import { basic, SERVICE, tokenApp } from '../support/token-fixture.js';

const login = async (app: Express, user: string, password: string): Promise<string> => {
  const res = await request(app).get(`/token?account=${user}&client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic(user, password));
  expect(res.status).toBe(200);
  return res.body.refresh_token as string;
};
const refresh = (app: Express, token: string) => request(app).post('/token').type('form').send({
  client_id: 'docker', grant_type: 'refresh_token', refresh_token: token, scope: 'repository:x/app:pull', service: SERVICE,
});

/** Replaces the file as an operator (or `dockgate htpasswd`) does: a complete new file renamed into place. */
function replaceFile(file: string, content: string): void {
  writeFileSync(`${file}.new`, content);
  renameSync(`${file}.new`, file);
}

describe('refresh tokens of an account removed from the htpasswd file stop working and are revoked', () => {
  test('bob removed from the file: his refresh grant is 400 invalid_grant, all his tokens are revoked, alice is untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-gone-'));
    const file = join(dir, 'users');
    const alice = await htpasswdLine('alice', 'alice pw', 4);
    const bob = await htpasswdLine('bob', 'bob pw', 4);
    writeFileSync(file, `${alice}\n${bob}\n`);
    const store = new MemoryRefreshTokenStore();
    const audit: unknown[] = [];
    const { app } = tokenApp({ authenticate: htpasswdAuthenticator({ file }, { recheckMs: 0 }), refreshTokens: { store }, audit: (e) => audit.push(e) });
    const bobFirst = await login(app, 'bob', 'bob pw');
    const bobSecond = await login(app, 'bob', 'bob pw');
    const aliceToken = await login(app, 'alice', 'alice pw');
    expect((await refresh(app, bobFirst)).status).toBe(200);

    replaceFile(file, `${alice}\n`);
    const refused = await refresh(app, bobFirst);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant' });
    expect(store.size).toBe(1);
    expect(audit).toContainEqual(expect.objectContaining({ type: 'refresh.refused', account: 'bob', error: 'invalid_grant', reason: expect.stringContaining('gone') }));
    // Revoked, not only refused: bob back in the file does not bring his old tokens back.
    replaceFile(file, `${alice}\n${bob}\n`);
    expect((await refresh(app, bobSecond)).status).toBe(400);
    expect((await refresh(app, bobFirst)).status).toBe(400);
    expect((await refresh(app, aliceToken)).status).toBe(200);
  });
});

describe('a host authenticator answers through lookup; without one, refresh tokens run until they expire', () => {
  const base: Authenticator = async ({ username, password }) => (password === 'pw' ? { subject: username } : null);

  test('disabled refuses and revokes', async () => {
    const statuses = new Map<string, AccountStatus>([['alice', 'active']]);
    const authenticate: Authenticator = Object.assign(async (req: Parameters<Authenticator>[0]) => base(req), {
      lookup: async (subject: string) => statuses.get(subject),
    });
    const store = new MemoryRefreshTokenStore();
    const { app } = tokenApp({ authenticate, refreshTokens: { store } });
    const token = await login(app, 'alice', 'pw');
    expect((await refresh(app, token)).status).toBe(200);
    statuses.set('alice', 'disabled');
    expect((await refresh(app, token)).body).toMatchObject({ error: 'invalid_grant' });
    expect(store.size).toBe(0);
  });

  test('an authenticator that cannot tell (no lookup, or undefined) keeps the token working', async () => {
    const { app } = tokenApp({ authenticate: base });
    const token = await login(app, 'alice', 'pw');
    expect((await refresh(app, token)).status).toBe(200);
    const unsure: Authenticator = Object.assign(async (req: Parameters<Authenticator>[0]) => base(req), { lookup: async () => undefined });
    const other = tokenApp({ authenticate: unsure });
    expect((await refresh(other.app, await login(other.app, 'alice', 'pw'))).status).toBe(200);
  });

  test('a directory out of reach is 503 with Retry-After: the token is neither honoured nor revoked', async () => {
    let down = false;
    const authenticate: Authenticator = Object.assign(async (req: Parameters<Authenticator>[0]) => base(req), {
      lookup: async (): Promise<AccountStatus> => {
        if (down) throw new AuthenticatorUnavailableError('directory down', { retryAfter: 7 });
        return 'active';
      },
    });
    const { app } = tokenApp({ authenticate });
    const token = await login(app, 'alice', 'pw');
    down = true;
    const res = await refresh(app, token);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    down = false;
    expect((await refresh(app, token)).status).toBe(200);
  });
});

describe('chainAuthenticators: lookup asks in order; unknown everywhere refuses, a member without lookup makes it "cannot tell"', () => {
  const status = (value: AccountStatus | undefined): Authenticator => Object.assign(async () => undefined, { lookup: async () => value });
  test.each([
    [['unknown', 'active'], 'active'],
    [['disabled', 'active'], 'disabled'],
    [['unknown', 'unknown'], 'unknown'],
    [['unknown', undefined], undefined],
  ] as Array<[Array<AccountStatus | undefined>, AccountStatus | undefined]>)('%j → %j', async (members, expected) => {
    const chain = chainAuthenticators(...members.map(status));
    await expect(chain.lookup!('alice')).resolves.toBe(expected);
  });
  test('a member without lookup at all also makes "unknown" elsewhere "cannot tell"', async () => {
    const chain = chainAuthenticators(status('unknown'), async () => undefined);
    await expect(chain.lookup!('alice')).resolves.toBeUndefined();
  });
  test('no member with lookup: the chain has none', () => {
    expect(chainAuthenticators(async () => undefined).lookup).toBeUndefined();
  });
});
