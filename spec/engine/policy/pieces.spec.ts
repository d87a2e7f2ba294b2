import { describe, expect, test } from '@jest/globals';
import { adminPredicate, tenancyPolicy, type EngineCaller } from '../../../lib/engine/index.js';
import { inNamespace } from '../../../lib/engine/policy/image-namespace.js';
import { underAllowedDir } from '../../../lib/engine/policy/host-reaching-fields.js';

const caller = (subject: string | undefined, access: EngineCaller['access'] = [], claims: Record<string, unknown> = {}): EngineCaller =>
  ({ ...(subject !== undefined ? { subject } : {}), claims, access });

describe('a tenant\'s image namespace is SUBJECT/…, with or without a registry in front', () => {
  test.each([
    ['bob/app', true], ['bob/app:1', true], ['bob/tools/x@sha256:' + 'a'.repeat(64), true], ['127.0.0.1:5000/bob/app', true],
    ['docker.io/bob/app', true], ['localhost:5000/bob/app:2', true],
    ['busybox', false], ['library/busybox', false], ['docker.io/library/bob', false], ['bob', false], ['bobby/app', false],
    ['alice/app', false], ['127.0.0.1:5000/alice/bob', false], ['Bob/app', false], ['bob/../x', false],
  ])('%s → %s', (ref, mine) => {
    expect(inNamespace(ref, 'bob')).toBe(mine);
  });
  test('no subject, no namespace', () => {
    expect(inNamespace('bob/app', undefined)).toBe(false);
    expect(inNamespace('bob/app', '')).toBe(false);
  });
});

describe('allowed bind directories: nothing climbs out', () => {
  test.each([
    ['/srv/shared', true], ['/srv/shared/a/b', true], ['/srv/shared/../etc', false], ['/srv/sharedx', false], ['/srv', false], ['relative', false], ['/', false],
  ])('%s → %s', (path, inside) => {
    expect(underAllowedDir(path, ['/srv/shared'])).toBe(inside);
  });
});

describe('adminPredicate: account names, an engine:api:admin grant, or the host\'s test', () => {
  test('by default, a token granted engine:api:admin (or *) administers; read,write does not', () => {
    const admin = adminPredicate();
    expect(admin(caller('a', [{ type: 'engine', name: 'api', actions: ['read', 'write', 'admin'] }]))).toBe(true);
    expect(admin(caller('a', [{ type: 'engine', name: 'api', actions: ['*'] }]))).toBe(true);
    expect(admin(caller('a', [{ type: 'engine', name: 'api', actions: ['read', 'write'] }]))).toBe(false);
    expect(admin(caller(undefined))).toBe(false);
  });
  test('subjects and test; access: false turns the grant off', () => {
    const admin = adminPredicate({ subjects: ['root'], access: false, test: (c) => c.claims.role === 'ops' });
    expect(admin(caller('root'))).toBe(true);
    expect(admin(caller('eve', [], { role: 'ops' }))).toBe(true);
    expect(admin(caller('eve', [{ type: 'engine', name: 'api', actions: ['admin'] }]))).toBe(false);
  });
  test('bad options throw a TypeError naming the option', () => {
    expect(() => adminPredicate({ subjects: [''] })).toThrow(/"subjects"/);
    expect(() => adminPredicate({ access: 'admin' })).toThrow(/"access" must be type:name:action/);
    expect(() => adminPredicate({ test: true as never })).toThrow(/"test"/);
    expect(() => tenancyPolicy({ maxContainers: -2 })).toThrow(/"maxContainers"/);
  });
});
