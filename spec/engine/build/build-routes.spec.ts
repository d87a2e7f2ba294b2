import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { composePolicies, imageNamePolicy, OWNER_LABEL, ownershipPolicy, tenantPolicy, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { testApp, testRuntime } from '../helpers.js';
import { admin, as, policyApp } from '../policy/support.js';

const sandboxed = existsSync('/bin/busybox') && spawnSync('bwrap', ['--version']).status === 0;
const describeSandboxed = sandboxed ? describe : describe.skip;
if (!sandboxed) process.stderr.write('build route specs skipped: bwrap (bubblewrap) or /bin/busybox (busybox-static) is missing\n');

/** A build context tar holding the given files. */
function contextTar(files: Record<string, string | Buffer>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-build-route-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const tar = spawnSync('tar', ['-C', dir, '-c', ...Object.keys(files)]).stdout;
  rmSync(dir, { recursive: true, force: true });
  return tar;
}

/** The JSON messages of a build answer. */
const messages = (text: string) => text.split('\r\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('a runtime without image making answers 501 naming the feature', () => {
  const app = testApp(testRuntime().runtime, '1.12-1.41');
  test('POST /build', async () => {
    const res = await request(app).post('/v1.41/build').set('Content-Type', 'application/x-tar').send(contextTar({ Dockerfile: 'FROM busybox\n' }));
    expect({ status: res.status, body: res.body }).toEqual({ status: 501, body: { message: 'building images (docker build) is not supported by the scripted runtime' } });
  });
  test('POST /commit', async () => {
    const res = await request(app).post('/v1.41/commit?container=x');
    expect({ status: res.status, body: res.body }).toEqual({ status: 501, body: { message: 'committing containers (docker commit) is not supported by the scripted runtime' } });
  });
});

describeSandboxed('POST /build on the sandbox runtime: query refusals, Dockerfile errors before any output, the message stream', () => {
  let dir: string;
  let runtime: ContainerRuntime;
  let app: Express;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dockgate-build-routes-'));
    runtime = sandboxRuntime({ stateDir: dir });
    app = testApp(runtime, '1.12-1.41');
  });
  afterAll(async () => {
    await runtime.close?.();
    rmSync(dir, { recursive: true, force: true });
  });
  const build = (query: string, files: Record<string, string | Buffer>) => request(app).post(`/v1.41/build${query}`).set('Content-Type', 'application/x-tar').send(contextTar(files)).buffer(true).parse((res, done) => {
    let text = '';
    res.on('data', (c: Buffer) => { text += c.toString(); });
    res.on('end', () => done(null, text));
  });

  test.each([
    ['?remote=https://example.com/repo.git', /^remote: building from a remote context/],
    ['?platform=linux/arm64', /^platform: only this server's platform \(linux\/\w+\) can be built, not linux\/arm64$/],
    ['?version=2', /^version: BuildKit \(version=2\) is not supported/],
    ['?squash=1', /^squash is only supported with experimental mode$/],
    ['?buildargs=notjson', /^buildargs is not valid JSON$/],
    ['?t=Bad:Tag:x', /^invalid reference format: Bad:Tag:x$/],
  ])('%s is a 400 naming the parameter', async (query, message) => {
    const res = await build(query, { Dockerfile: 'FROM busybox\n' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body as string).message).toMatch(message);
  });

  test('a RUN setting the sandbox cannot honour fails the build naming it (cgroupparent)', async () => {
    const refused = messages((await build('?cgroupparent=elsewhere', { Dockerfile: 'FROM busybox\nRUN true\n' })).body as string);
    expect((refused.at(-1) as { error: string }).error).toBe('HostConfig.CgroupParent is not supported by the sandbox runtime');
  });

  test('an unknown instruction is dockerd\'s 400 before any output; so is a missing Dockerfile', async () => {
    const bad = await build('', { Dockerfile: 'FROM busybox\nFOO bar\n' });
    expect({ status: bad.status, body: JSON.parse(bad.body as string) }).toEqual({ status: 400, body: { message: 'dockerfile parse error line 2: unknown instruction: FOO' } });
    const missing = await build('?dockerfile=nope', { Dockerfile: 'FROM busybox\n' });
    expect({ status: missing.status, body: JSON.parse(missing.body as string) }).toEqual({ status: 400, body: { message: 'Cannot locate specified Dockerfile: nope' } });
  });

  test('the stream has dockerd\'s messages: Step lines, the image ID as aux, then Successfully built and tagged', async () => {
    const res = await build('?t=route-built:1&labels={"a":"b"}', { Dockerfile: 'FROM busybox\nENV A=1\n' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const out = messages(res.body as string);
    const id = (out.find((m) => m.aux) as { aux: { ID: string } }).aux.ID;
    expect(out.map((m) => m.stream ?? (m.aux ? 'aux' : m))).toEqual([
      'Step 1/3 : FROM busybox', '\n', expect.stringMatching(/^ ---> [0-9a-f]{12}\n$/),
      'Step 2/3 : ENV A=1', '\n', expect.stringMatching(/^ ---> [0-9a-f]{12}\n$/),
      'Step 3/3 : LABEL "a"="b"', '\n', ` ---> ${id.slice(7, 19)}\n`,
      'aux', `Successfully built ${id.slice(7, 19)}\n`, 'Successfully tagged route-built:1\n',
    ]);
    const inspect = await request(app).get('/v1.41/images/route-built:1/json');
    expect(inspect.body).toMatchObject({ Id: id, Config: { Env: expect.arrayContaining(['A=1']), Labels: expect.objectContaining({ a: 'b' }) } });
  });

  test('a build\'s intermediate images are the final one\'s parents: hidden from docker images without all=1, as dockerd', async () => {
    const res = await build('?t=route-chain:1', { Dockerfile: 'FROM busybox\nENV A=1\nENV B=2\n' });
    const id = (messages(res.body as string).find((m) => m.aux) as { aux: { ID: string } }).aux.ID;
    const inspect = (await request(app).get('/v1.41/images/route-chain:1/json')).body as { Parent: string };
    expect(inspect.Parent).toMatch(/^sha256:[0-9a-f]{64}$/);
    const ids = (list: { Id: string }[]) => list.map((i) => i.Id);
    const shown = ids((await request(app).get('/v1.41/images/json')).body);
    expect(shown).toContain(id);
    expect(shown).not.toContain(inspect.Parent);
    expect(ids((await request(app).get('/v1.41/images/json?all=1')).body)).toContain(inspect.Parent);
    // Prune (dangling only) keeps a parent; it goes with its child.
    await request(app).post('/v1.41/images/prune');
    expect(ids((await request(app).get('/v1.41/images/json?all=1')).body)).toContain(inspect.Parent);
  });

  test('FROM scratch, COPY --from a stage, ADD of a local tar.gz (extracted), an exec-form RUN, and ONBUILD triggers of a base', async () => {
    const inner = mkdtempSync(join(tmpdir(), 'dockgate-build-tgz-'));
    writeFileSync(join(inner, 'inner.txt'), 'from the archive\n');
    const tgz = spawnSync('tar', ['-C', inner, '-cz', 'inner.txt']).stdout;
    const scratch = messages((await build('', {
      Dockerfile: 'FROM busybox AS base\nFROM scratch\nCOPY --from=base /bin/busybox /bin/busybox\nADD arch.tgz /x/\nRUN ["/bin/busybox", "cat", "/x/inner.txt"]\n',
      'arch.tgz': tgz,
    })).body as string);
    expect(scratch.map((m) => m.stream)).toContain('from the archive\n');
    expect(scratch.at(-1)).toEqual({ stream: expect.stringMatching(/^Successfully built /) });
    await build('?t=route-onbuild:1', { Dockerfile: 'FROM busybox\nONBUILD RUN echo triggered > /onbuild\n' });
    const child = messages((await build('', { Dockerfile: 'FROM route-onbuild:1\nRUN cat /onbuild\n' })).body as string).map((m) => m.stream);
    expect(child).toContain('# Executing 1 build trigger\n');
    expect(child).toContain('triggered\n');
  });

  test('q=1 writes only the image ID, as a stream message (dockerd 20.10\'s answer)', async () => {
    const res = await build('?q=1', { Dockerfile: 'FROM busybox\nENV Q=1\n' });
    expect(messages(res.body as string)).toEqual([{ stream: expect.stringMatching(/^sha256:[0-9a-f]{64}\n$/) }]);
  });

  test('ADD of a URL is refused by name in the stream (no outbound network for builds)', async () => {
    const out = messages((await build('', { Dockerfile: 'FROM busybox\nADD https://example.com/x /x\n' })).body as string);
    expect((out.at(-1) as { error: string }).error).toMatch(/^ADD https:\/\/example.com\/x: adding files from a URL is not supported by this builder/);
  });
});

describeSandboxed('build and commit under the policies: names in the caller\'s namespace, RUN containers and commits the caller\'s own', () => {
  let dir: string;
  let runtime: ContainerRuntime;
  let app: Express;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dockgate-build-policy-'));
    runtime = sandboxRuntime({ stateDir: dir });
    app = policyApp(runtime, composePolicies(tenantPolicy({ admin }), imageNamePolicy({ admin }), ownershipPolicy({ admin })));
  });
  afterAll(async () => {
    await runtime.close?.();
    rmSync(dir, { recursive: true, force: true });
  });
  const tar = contextTar({ Dockerfile: 'FROM busybox\nRUN echo hi > /f\n' });

  test('a tenant builds under its namespace; a shared name is refused before the context is read', async () => {
    const refused = await as(app, 'bob').post('/v1.41/build?t=busybox:mine').set('Content-Type', 'application/x-tar').send(tar);
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { message: 'busybox:mine is not in your namespace (bob/…): only administrators may write it' } });
    const own = await as(app, 'bob').post('/v1.41/build?t=bob/app:1').set('Content-Type', 'application/x-tar').send(tar).buffer(true).parse((res, done) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => done(null, text));
    });
    expect(own.status).toBe(200);
    expect(own.body).toContain('Successfully tagged bob/app:1');
    // Its RUN container was bob's while it ran, and is gone now.
    expect((await as(app, 'root').get('/v1.41/containers/json?all=1')).body).toEqual([]);
  });

  test('networkmode=host is refused to a tenant as --network host is', async () => {
    const res = await as(app, 'bob').post('/v1.41/build?networkmode=host').set('Content-Type', 'application/x-tar').send(tar);
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/NetworkMode/);
  });

  test('an anonymous caller cannot build (its RUN containers would belong to nobody)', async () => {
    const res = await as(app, undefined).post('/v1.41/build').set('Content-Type', 'application/x-tar').send(tar);
    expect(res.status).toBe(403);
  });

  test('commit: another tenant\'s container is 404, one\'s own commits into its namespace only', async () => {
    const created = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['true'] });
    const id = created.body.Id as string;
    const hidden = await as(app, 'alice').post(`/v1.41/commit?container=${id}&repo=alice/x&tag=1`);
    expect({ status: hidden.status, body: hidden.body }).toEqual({ status: 404, body: { message: `No such container: ${id}` } });
    expect((await as(app, 'bob').post(`/v1.41/commit?container=${id}&repo=busybox&tag=stolen`)).status).toBe(403);
    const own = await as(app, 'bob').post(`/v1.41/commit?container=${id}&repo=bob/snap&tag=1`);
    expect({ status: own.status, id: own.body.Id }).toEqual({ status: 201, id: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    void OWNER_LABEL;
  });
});
