import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import { composePolicies, imageNamePolicy, OWNER_LABEL, ownerCapsPolicy, ownershipPolicy, tenancyPolicy, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { admin, as, policyApp } from './support.js';

// The sandbox runtime's image store seeds busybox from /bin/busybox (busybox-static).
const seeded = existsSync('/bin/busybox');
const describeSeeded = seeded ? describe : describe.skip;
if (!seeded) process.stderr.write('policy image specs skipped: /bin/busybox (busybox-static) is missing\n');

const binary = (res: unknown, done: (err: Error | null, body: unknown) => void): void => {
  const chunks: Buffer[] = [];
  const stream = res as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
};

describeSeeded('image names: a tenant writes only under its own namespace', () => {
  let dir: string;
  let runtime: ContainerRuntime;
  let app: Express;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dockgate-policy-images-'));
    runtime = sandboxRuntime({ stateDir: dir });
    // The loopback registries these specs name are allowed: the rules here are the namespace ones.
    app = policyApp(runtime, composePolicies(imageNamePolicy({ admin, registryHosts: ['127.0.0.1'] }), ownershipPolicy({ admin })));
  });
  afterAll(async () => {
    await runtime.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  test('tag: bob/… and HOST/bob/… are his; busybox, library/… and alice/… are refused naming the reference', async () => {
    expect((await as(app, 'bob').post('/v1.41/images/busybox/tag?repo=bob/box&tag=1')).status).toBe(201);
    expect((await as(app, 'bob').post('/v1.41/images/busybox/tag?repo=127.0.0.1:5000/bob/box&tag=1')).status).toBe(201);
    for (const [repo, ref] of [['busybox', 'busybox:mine'], ['library/busybox', 'busybox:mine'], ['alice/box', 'alice/box:mine'], ['127.0.0.1:5000/alice/box', '127.0.0.1:5000/alice/box:mine']]) {
      const res = await as(app, 'bob').post(`/v1.41/images/busybox/tag?repo=${repo}&tag=mine`);
      expect({ repo, status: res.status, body: res.body }).toEqual({ repo, status: 403, body: { message: `${ref} is not in your namespace (bob/…): only administrators may write it` } });
    }
    expect((await as(app, 'root').post('/v1.41/images/busybox/tag?repo=busybox&tag=mine')).status).toBe(201);
  });

  test('push: a shared name or another tenant\'s is refused naming the reference; his own passes the policy', async () => {
    const header = Buffer.from('{}').toString('base64url');
    for (const [path, ref] of [['busybox/push?tag=latest', 'busybox:latest'], ['127.0.0.1:9/alice/box/push?tag=1', '127.0.0.1:9/alice/box:1']]) {
      const res = await as(app, 'bob').post(`/v1.41/images/${path}`).set('X-Registry-Auth', header);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 403, body: { message: `${ref} is not in your namespace (bob/…): only administrators may write it` } });
    }
    // His own namespace passes the policy (and then the store has no such image).
    const own = await as(app, 'bob').post('/v1.41/images/127.0.0.1:9/bob/box/push?tag=1').set('X-Registry-Auth', header);
    expect({ status: own.status, body: own.body }).toEqual({ status: 404, body: { message: 'An image does not exist locally with the tag: 127.0.0.1:9/bob/box' } });
  });

  test('import (image.import): a shared name is refused before the tar is read; bob/… imports', async () => {
    const refused = await as(app, 'bob').post('/v1.41/images/create?fromSrc=-&repo=busybox&tag=imported').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: 'busybox:imported is not in your namespace (bob/…): only administrators may write it' });
    const own = await as(app, 'bob').post('/v1.41/images/create?fromSrc=-&repo=bob/imported&tag=1').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect(own.status).toBe(200);
    expect(JSON.parse(own.text)).toEqual({ status: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
  });

  test('pull to a shared name is refused before anything is fetched', async () => {
    const res = await as(app, 'bob').post('/v1.41/images/create?fromImage=busybox&tag=latest');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'busybox:latest is not in your namespace (bob/…): only administrators may write it' });
    // His own namespace passes the policy (and then fails to reach a registry that is not there).
    const own = await as(app, 'bob').post('/v1.41/images/create?fromImage=127.0.0.1:9/bob/app&tag=1');
    expect(own.status).not.toBe(403);
  });

  test('load: an archive naming a shared image is refused and loads nothing; one naming bob/… loads', async () => {
    await as(app, 'root').post('/v1.41/images/busybox/tag?repo=busybox&tag=tenant-load');
    const shared = (await as(app, 'root').get('/v1.41/images/get?names=busybox:tenant-load').buffer(true).parse(binary)).body as Buffer;
    await as(app, 'root').delete('/v1.41/images/busybox:tenant-load');
    const refused = await as(app, 'bob').post('/v1.41/images/load').set('Content-Type', 'application/x-tar').send(shared);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: 'busybox:tenant-load is not in your namespace (bob/…): only administrators may write it' });
    expect((await as(app, 'root').get('/v1.41/images/busybox:tenant-load/json')).status).toBe(404);

    await as(app, 'bob').post('/v1.41/images/busybox/tag?repo=bob/loaded&tag=1');
    const own = (await as(app, 'bob').get('/v1.41/images/get?names=bob/loaded:1').buffer(true).parse(binary)).body as Buffer;
    await as(app, 'bob').delete('/v1.41/images/bob/loaded:1');
    const loaded = await as(app, 'bob').post('/v1.41/images/load').set('Content-Type', 'application/x-tar').send(own);
    expect(loaded.status).toBe(200);
    expect((await as(app, 'bob').get('/v1.41/images/bob/loaded:1/json')).status).toBe(200);
  });

  test('delete: his tags yes; a shared name, or an image id carrying shared names, no; image prune is the administrators\'', async () => {
    await as(app, 'bob').post('/v1.41/images/busybox/tag?repo=bob/gone&tag=1');
    expect((await as(app, 'bob').delete('/v1.41/images/bob/gone:1')).status).toBe(200);
    expect((await as(app, 'bob').delete('/v1.41/images/busybox')).body).toEqual({ message: 'busybox:latest is not in your namespace (bob/…): only administrators may delete it' });
    const id = ((await as(app, 'bob').get('/v1.41/images/busybox/json')).body as { Id: string }).Id;
    const byId = await as(app, 'bob').delete(`/v1.41/images/${id}?force=1`);
    expect(byId.status).toBe(403);
    expect(byId.body.message).toMatch(/carries names outside your namespace/);
    expect((await as(app, 'bob').post('/v1.41/images/prune')).body).toEqual({ message: 'pruning images is for administrators' });
    expect((await as(app, 'bob').get('/v1.41/images/busybox/json')).status).toBe(200);
  });
});

describeSeeded('per-owner caps: containers and image bytes, counted from the owner records', () => {
  let dir: string;
  let runtime: ContainerRuntime;
  let app: Express;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dockgate-policy-caps-'));
    runtime = sandboxRuntime({ stateDir: dir });
    app = policyApp(runtime, composePolicies(ownershipPolicy({ admin }), ownerCapsPolicy({ admin, maxContainers: 2, maxImageBytes: 1 })));
  });
  afterAll(async () => {
    await runtime.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the third container of one owner is refused; another owner and an administrator are not held by it', async () => {
    for (let i = 0; i < 2; i++) expect((await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox' })).status).toBe(201);
    const third = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox' });
    expect(third.status).toBe(403);
    expect(third.body).toEqual({ message: 'bob owns 2 containers, the most allowed per owner (2): remove some first' });
    expect((await as(app, 'alice').post('/v1.41/containers/create').send({ Image: 'busybox' })).status).toBe(201);
    expect((await as(app, 'root').post('/v1.41/containers/create').send({ Image: 'busybox', Labels: { [OWNER_LABEL]: 'bob' } })).status).toBe(201);
  });

  test('once the images under bob/ reach the byte cap, his next tag, pull or load is refused', async () => {
    expect((await as(app, 'bob').post('/v1.41/images/busybox/tag?repo=bob/one&tag=1')).status).toBe(201);
    const next = await as(app, 'bob').post('/v1.41/images/busybox/tag?repo=bob/two&tag=1');
    expect(next.status).toBe(403);
    expect(next.body.message).toMatch(/^the images under bob\/ take \d+ bytes, the most allowed per owner \(1\)/);
    expect((await as(app, 'bob').post('/v1.41/images/create?fromImage=bob/three&tag=1')).status).toBe(403);
  });

  test('the caps are checked at construction', () => {
    expect(() => ownerCapsPolicy({ maxContainers: -1 })).toThrow(/"maxContainers" must be an integer >= 0/);
    expect(() => ownerCapsPolicy({ maxImageBytes: 1.5 })).toThrow(/"maxImageBytes" must be an integer >= 0/);
  });
});

describeSeeded('the owner survives a restart of the engine (kept in the container record)', () => {
  test('after a new runtime reads the same state directory, alice still owns her container and bob still cannot see it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-policy-restart-'));
    try {
      const first = sandboxRuntime({ stateDir: dir });
      const before = policyApp(first, tenancyPolicy({ admin }));
      const created = await as(before, 'alice').post('/v1.41/containers/create?name=kept').send({ Image: 'busybox', Cmd: ['true'] });
      expect(created.status).toBe(201);
      await first.close?.();

      const second = sandboxRuntime({ stateDir: dir });
      const after = policyApp(second, tenancyPolicy({ admin }));
      expect((await as(after, 'alice').get('/v1.41/containers/kept/json')).body.Config.Labels[OWNER_LABEL]).toBe('alice');
      expect((await as(after, 'bob').get('/v1.41/containers/kept/json')).body).toEqual({ message: 'No such container: kept' });
      expect((await as(after, 'bob').get('/v1.41/containers/json?all=1')).body).toEqual([]);
      await second.close?.();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
