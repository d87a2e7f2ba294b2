import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { ImageStore } from '../../../lib/engine/images/index.js';
import { sha256Of } from '../../../lib/engine/images/store/digest.js';
import { archiveOf, collect, streamOf, tarOf } from './tar-fixture.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dockgate-store-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function members(archive: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const ex = extract();
  Readable.from([archive]).pipe(ex as unknown as NodeJS.WritableStream);
  for await (const entry of ex) out.set(entry.header.name, await collect(entry as unknown as Readable));
  return out;
}

describe('content is verified against its digest: a tampered layer is refused and nothing of it is kept', () => {
  test('a layer whose bytes do not hash to its diff ID is refused by load, and no image or layer remains', async () => {
    const store = await ImageStore.open(join(dir, 'tamper'));
    const good = await tarOf([{ name: 'f', content: 'good' }]);
    const evil = await tarOf([{ name: 'f', content: 'evil' }]);
    const archive = await archiveOf([evil], 'x:1', [sha256Of(good)]);
    await expect(store.load(streamOf(archive))).rejects.toMatchObject({ status: 400, message: expect.stringContaining('digest mismatch') });
    expect(await store.list()).toEqual([]);
    expect(await readdir(join(dir, 'tamper', 'layers'))).toEqual([]);
  });

  test('importing a layer with the wrong expected digest keeps nothing', async () => {
    const store = await ImageStore.open(join(dir, 'tamper2'));
    const layer = await tarOf([{ name: 'f', content: 'x' }]);
    await expect(store.files.importLayer(streamOf(layer), sha256Of('other'))).rejects.toThrow(/digest mismatch/);
    expect(await readdir(join(dir, 'tamper2', 'layers'))).toEqual([]);
  });
});

describe('docker load: layers applied in order with whiteouts; the config is kept and exposed', () => {
  let store: ImageStore;
  beforeAll(async () => {
    store = await ImageStore.open(join(dir, 'load'));
    const base = await tarOf([{ name: 'f', content: 'base' }, { name: 'gone', content: 'g' }]);
    const top = await tarOf([{ name: 'f', content: 'top' }, { name: '.wh.gone', content: '' }]);
    const out = await collect(await store.load(streamOf(await archiveOf([base, top], 'app:1'))));
    expect(out.toString()).toBe(`${JSON.stringify({ stream: 'Loaded image: app:1\n' })}\r\n`);
  });

  test('the root filesystem is the merged layers', async () => {
    const image = await store.resolve('app:1');
    expect(await readFile(join(image?.rootfs as string, 'f'), 'utf8')).toBe('top');
    expect(existsSync(join(image?.rootfs as string, 'gone'))).toBe(false);
  });

  test('inspect shows Cmd, Env, WorkingDir, User, ExposedPorts, Labels and the layers in dockerd\'s shape', async () => {
    const body = await store.inspect('app:1');
    expect(body).toMatchObject({
      RepoTags: ['app:1'], Os: 'linux', Architecture: 'amd64',
      Config: { Cmd: ['cat', '/f'], Env: ['A=1'], WorkingDir: '/w', User: '1000', ExposedPorts: { '80/tcp': {} }, Labels: { l: 'v' } },
      RootFS: { Type: 'layers' },
    });
    expect((body.RootFS as { Layers: string[] }).Layers).toHaveLength(2);
  });

  test('history lists the steps newest first, the top one carrying the ID and tags', async () => {
    const rows = await store.history('app:1');
    expect(rows.map((r) => r.CreatedBy)).toEqual(['step 1', 'step 0']);
    expect(rows[0]).toMatchObject({ Id: (await store.inspect('app:1')).Id, Tags: ['app:1'] });
    expect(rows[1]).toMatchObject({ Id: '<missing>', Tags: null });
  });
});

describe('docker save writes a docker-archive that docker load reads back to the same image', () => {
  test('save → load into another store gives the same ID, tags and files', async () => {
    const a = await ImageStore.open(join(dir, 'save-a'));
    await a.load(streamOf(await archiveOf([await tarOf([{ name: 'hello', content: 'world' }])], 'round:trip')));
    const id = (await a.inspect('round:trip')).Id;
    const archive = await collect(await a.save(['round:trip']));
    const names = await members(archive);
    const manifest = JSON.parse((names.get('manifest.json') as Buffer).toString()) as { Config: string; RepoTags: string[]; Layers: string[] }[];
    expect(manifest).toEqual([{ Config: `${String(id).slice(7)}.json`, RepoTags: ['round:trip'], Layers: [expect.stringMatching(/^[0-9a-f]{64}\/layer\.tar$/)] }]);
    expect(JSON.parse((names.get('repositories') as Buffer).toString())).toEqual({ round: { trip: expect.any(String) } });
    const b = await ImageStore.open(join(dir, 'save-b'));
    await b.load(streamOf(archive));
    expect((await b.inspect('round:trip')).Id).toBe(id);
    expect(await readFile(join((await b.resolve('round:trip'))?.rootfs as string, 'hello'), 'utf8')).toBe('world');
  });

  test('a gzipped archive loads too (docker save | gzip)', async () => {
    const { gzipSync } = await import('node:zlib');
    const c = await ImageStore.open(join(dir, 'save-c'));
    await c.load(streamOf(gzipSync(await archiveOf([await tarOf([{ name: 'z', content: 'zipped' }])], 'zipped:1'))));
    expect(await readFile(join((await c.resolve('zipped:1'))?.rootfs as string, 'z'), 'utf8')).toBe('zipped');
  });

  test('a file that is not an image archive is a 400', async () => {
    const c = await ImageStore.open(join(dir, 'save-c'));
    await expect(c.load(streamOf(await tarOf([{ name: 'README', content: 'hi' }])))).rejects.toMatchObject({ status: 400, message: 'invalid image archive: neither manifest.json nor index.json found' });
  });

  test('saving an unknown image is a 404 before any byte', async () => {
    const a = await ImageStore.open(join(dir, 'save-a'));
    await expect(a.save(['nope:1'])).rejects.toMatchObject({ status: 404, message: 'No such image: nope:1' });
  });
});

describe('tag, rmi and prune follow dockerd: untag vs delete, conflicts with containers', () => {
  test('untagging one of two tags keeps the image; the last tag deletes it and its layers', async () => {
    const store = await ImageStore.open(join(dir, 'rmi'));
    await store.load(streamOf(await archiveOf([await tarOf([{ name: 'a', content: '1' }])], 'one:1')));
    await store.tag('one:1', 'two', '2');
    expect((await store.inspect('one:1')).RepoTags).toEqual(['one:1', 'two:2']);
    expect(await store.remove('two:2')).toEqual([{ Untagged: 'two:2' }]);
    const id = (await store.inspect('one:1')).Id as string;
    const removed = await store.remove('one:1');
    expect(removed).toEqual([{ Untagged: 'one:1' }, { Deleted: id }, { Deleted: expect.stringMatching(/^sha256:/) }]);
    expect(await store.list()).toEqual([]);
    expect(await readdir(join(dir, 'rmi', 'rootfs'))).toEqual([]);
  });

  test('an image a container uses is not deleted: running never, stopped only with force', async () => {
    const users = new Map<string, { id: string; running: boolean }[]>();
    const store = await ImageStore.open(join(dir, 'conflict'), { usage: (id) => users.get(id) ?? [] });
    await store.load(streamOf(await archiveOf([await tarOf([{ name: 'a', content: '2' }])], 'used:1')));
    const id = (await store.inspect('used:1')).Id as string;
    users.set(id, [{ id: 'c'.repeat(64), running: true }]);
    await expect(store.remove(id)).rejects.toMatchObject({ status: 409, message: `conflict: unable to delete ${id.slice(7, 19)} (cannot be forced) - image is being used by running container cccccccccccc` });
    users.set(id, [{ id: 'c'.repeat(64), running: false }]);
    await expect(store.remove('used:1')).rejects.toMatchObject({ status: 409, message: expect.stringContaining('(must force) - container cccccccccccc is using its referenced image') });
    expect(await store.remove(id, { force: true })).toContainEqual({ Deleted: id });
  });

  test('prune removes untagged unused images; dangling=false also tagged unused ones', async () => {
    const store = await ImageStore.open(join(dir, 'prune'));
    await store.load(streamOf(await archiveOf([await tarOf([{ name: 'a', content: '3' }])], 'p:1')));
    expect(await store.prune()).toEqual({ ImagesDeleted: null, SpaceReclaimed: 0 });
    const pruned = await store.prune(new Map([['dangling', new Set(['false'])]]));
    expect(pruned.ImagesDeleted).toContainEqual({ Untagged: 'p:1' });
    expect(pruned.SpaceReclaimed).toBeGreaterThan(0);
    expect(await store.list()).toEqual([]);
  });

  test('list filters: dangling, label, reference globs, before/since; an unknown filter is a 400', async () => {
    const store = await ImageStore.open(join(dir, 'filters'));
    await store.load(streamOf(await archiveOf([await tarOf([{ name: 'a', content: '4' }])], 'web:1')));
    const f = (key: string, value: string) => new Map([[key, new Set([value])]]);
    expect((await store.list(f('reference', 'web'))).map((i) => i.RepoTags)).toEqual([['web:1']]);
    expect(await store.list(f('reference', 'db*'))).toEqual([]);
    expect(await store.list(f('label', 'l=v'))).toHaveLength(1);
    expect(await store.list(f('label', 'l=w'))).toEqual([]);
    expect(await store.list(f('dangling', 'true'))).toEqual([]);
    await expect(store.list(f('dangling', 'maybe'))).rejects.toMatchObject({ status: 400, message: "Invalid filter 'dangling=maybe'" });
    await expect(store.list(f('since', 'ghost:1'))).rejects.toMatchObject({ status: 404 });
    await expect(store.list(f('nope', 'x'))).rejects.toMatchObject({ status: 400, message: "Invalid filter 'nope'" });
  });

  test('unknown images are dockerd\'s 404', async () => {
    const store = await ImageStore.open(join(dir, 'prune'));
    await expect(store.remove('ghost:1')).rejects.toMatchObject({ status: 404, message: 'No such image: ghost:1' });
    await expect(store.tag('ghost:1', 'x')).rejects.toMatchObject({ status: 404 });
  });
});
