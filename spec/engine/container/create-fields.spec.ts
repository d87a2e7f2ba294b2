import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import type { ContainerRuntime, CreateRequest } from '../../../lib/engine/index.js';
import { createFieldsExcept } from '../../../lib/engine-api/create-fields.js';
import { testApp, testRuntime } from '../helpers.js';

const { runtime: inner } = testRuntime();
afterAll(async () => {
  await inner.close?.();
});

/** A runtime that states what it honors and records each create it is handed. */
function stating(createFields: readonly string[] | undefined): { runtime: ContainerRuntime; created: CreateRequest[] } {
  const created: CreateRequest[] = [];
  const runtime: ContainerRuntime = {
    name: 'tiny',
    ...(createFields ? { createFields } : {}),
    create: (r) => {
      created.push(r);
      return inner.create(r);
    },
    start: (id) => inner.start(id), wait: (id, c, s) => inner.wait(id, c, s), logs: (id, o) => inner.logs(id, o),
    attach: (id, o) => inner.attach(id, o), inspect: (id) => inner.inspect(id), list: (o) => inner.list(o), remove: (id, o) => inner.remove(id, o),
    events: (o) => inner.events(o),
  };
  return { runtime, created };
}

describe('a runtime states the create fields it honors; the router refuses any other that is set, with one 400 naming it', () => {
  const { runtime, created } = stating(createFieldsExcept(['User', 'HostConfig.Privileged', 'HostConfig.Dns']));
  const app = testApp(runtime, '1.24-1.43');

  test.each([
    [{ User: 'nobody' }, 'User is not supported by the tiny runtime'],
    [{ HostConfig: { Privileged: true } }, 'HostConfig.Privileged is not supported by the tiny runtime'],
    [{ HostConfig: { Dns: ['1.1.1.1'] } }, 'HostConfig.Dns is not supported by the tiny runtime'],
  ])('%j is refused before the runtime sees it', async (fields, message) => {
    const before = created.length;
    const res = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['x'], ...fields });
    expect([res.status, res.body]).toEqual([400, { message }]);
    expect(created.length).toBe(before);
  });

  test('the zero values the Docker CLI sends for every field (false, 0, "", [], {}, null) are not set, and pass', async () => {
    const res = await request(app).post('/v1.41/containers/create')
      .send({ Image: 'busybox', Cmd: ['x'], User: '', HostConfig: { Privileged: false, Dns: [], Memory: 0 } });
    expect(res.status).toBe(201);
  });

  test('the runtime is handed the typed spec beside the body as sent', async () => {
    const res = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: 'x y', HostConfig: { Binds: null, CapAdd: ['NET_ADMIN'] } });
    expect(res.status).toBe(201);
    const last = created[created.length - 1]!;
    expect(last.spec.cmd).toEqual(['x y']);
    expect(last.spec.host.binds).toEqual([]);
    expect(last.spec.host.capAdd).toEqual(['NET_ADMIN']);
    expect(last.body.Cmd).toBe('x y');
  });
});

describe('a runtime that states nothing (a forwarding runtime) is handed every field', () => {
  test('a set field no embedded runtime honors reaches create', async () => {
    const { runtime, created } = stating(undefined);
    const res = await request(testApp(runtime, '1.24-1.43')).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['x'], HostConfig: { Privileged: true } });
    expect(created).toHaveLength(1);
    expect(created[0]!.spec.host.privileged).toBe(true);
    // The scripted runtime behind it answers for itself.
    expect(res.status).toBe(201);
  });
});

describe('a HostConfig field of the wrong JSON type is 400 naming it, for every runtime', () => {
  test.each([
    [{ Binds: '/a:/b' }, 'HostConfig.Binds must be a list'],
    [{ CapAdd: [5] }, 'HostConfig.CapAdd: invalid capability "5"'],
    [{ Dns: [5] }, 'HostConfig.Dns must be a list of strings'],
    [{ NetworkMode: 5 }, 'HostConfig.NetworkMode must be a string'],
    [{ Init: 'yes' }, 'HostConfig.Init must be a boolean'],
    [{ Tmpfs: ['/run'] }, 'HostConfig.Tmpfs must map paths to options'],
    [{ PortBindings: { '80/tcp': [{ HostPort: 8080 }] } }, 'HostConfig.PortBindings "80/tcp": invalid host port "8080"'],
  ])('%j', async (host, message) => {
    const { runtime, created } = stating(undefined);
    const res = await request(testApp(runtime, '1.24-1.43')).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['x'], HostConfig: host });
    expect([res.status, res.body]).toEqual([400, { message }]);
    expect(created).toHaveLength(0);
  });
});

describe('Binds are parsed once, at decode: the runtime is handed typed binds, and a malformed entry is dockerd\'s 400', () => {
  const { runtime, created } = stating(undefined);
  const app = testApp(runtime, '1.24-1.43');

  test('each entry typed: source (host path, volume name, or none for an anonymous volume), target, modes, read-only, propagation', async () => {
    const res = await request(app).post('/v1.41/containers/create')
      .send({ Image: 'busybox', Cmd: ['x'], HostConfig: { Binds: ['/srv:/data:ro,z', 'cache:/cache', '/anon', '/h:/p:rshared'] } });
    expect(res.status).toBe(201);
    expect(created.at(-1)!.spec.host.binds).toEqual([
      { source: '/srv', target: '/data', modes: ['ro', 'z'], readOnly: true, propagation: '' },
      { source: 'cache', target: '/cache', modes: [], readOnly: false, propagation: '' },
      { source: '', target: '/anon', modes: [], readOnly: false, propagation: '' },
      { source: '/h', target: '/p', modes: ['rshared'], readOnly: false, propagation: 'rshared' },
    ]);
  });

  test.each(['a:b:c:d', ':/x', '/a:rel', 'rel'])('%s is "invalid volume specification", before the runtime sees it', async (bind) => {
    const before = created.length;
    const res = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['x'], HostConfig: { Binds: [bind] } });
    expect([res.status, res.body]).toEqual([400, { message: `invalid volume specification: '${bind}'` }]);
    expect(created.length).toBe(before);
  });
});

describe('create keys are matched whatever their case, as dockerd\'s decoder does: nothing is dropped for its spelling', () => {
  const { runtime, created } = stating(createFieldsExcept(['HostConfig.Privileged']));
  const app = testApp(runtime, '1.24-1.43');

  test('a field the runtime does not honor, spelled in lower case, is refused naming it', async () => {
    const res = await request(app).post('/v1.41/containers/create').send({ image: 'busybox', cmd: ['x'], hostconfig: { privileged: true } });
    expect([res.status, res.body]).toEqual([400, { message: 'HostConfig.Privileged is not supported by the tiny runtime' }]);
  });

  test('an honored field in another case reaches the spec; map keys (labels) keep theirs', async () => {
    const res = await request(app).post('/v1.41/containers/create')
      .send({ IMAGE: 'busybox', Cmd: ['x'], labels: { MixedCase: 'v' }, hostConfig: { capadd: ['NET_ADMIN'], restartpolicy: { name: 'always' } } });
    expect(res.status).toBe(201);
    const { spec } = created.at(-1)!;
    expect(spec.image).toBe('busybox');
    expect(spec.labels).toEqual({ MixedCase: 'v' });
    expect(spec.host.capAdd).toEqual(['NET_ADMIN']);
    expect(spec.host.restartPolicy.name).toBe('always');
  });
});
