import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageStore } from '../../../lib/engine/images/index.js';
import { archiveOf, streamOf, tarOf } from './tar-fixture.js';

const hasBusybox = existsSync('/bin/busybox');
const describeSeed = hasBusybox ? describe : describe.skip;

describeSeed('the offline busybox image is a real, deterministic one-layer image (needs busybox-static)', () => {
  let dir: string;
  let store: ImageStore;
  let id: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dockgate-seed-'));
    store = await ImageStore.open(join(dir, 'a'));
    id = await store.seedBusybox(['busybox:latest', 'alpine:latest']);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('seeding twice, or in another store, gives the same image ID', async () => {
    expect(await store.seedBusybox(['busybox:latest'])).toBe(id);
    const other = await ImageStore.open(join(dir, 'b'));
    expect(await other.seedBusybox()).toBe(id);
  });

  test('the seed answers to busybox and alpine, with sh as its command and a PATH', async () => {
    for (const ref of ['busybox', 'busybox:latest', 'docker.io/library/alpine', id, id.slice(7, 19)]) {
      const image = await store.resolve(ref);
      expect(image?.id).toBe(id);
    }
    const image = await store.resolve('busybox');
    expect(image?.config.config?.Cmd).toEqual(['sh']);
    expect(image?.config.config?.Env?.[0]).toMatch(/^PATH=/);
    expect(await store.resolve('nope')).toBeUndefined();
  });

  test('its root holds busybox, applet links, users root/user/nobody and a sticky /tmp', async () => {
    const image = await store.resolve('busybox');
    const root = image?.rootfs as string;
    expect((await lstat(join(root, 'bin/busybox'))).mode & 0o777).toBe(0o755);
    expect(await readlink(join(root, 'bin/sh'))).toBe('/bin/busybox');
    const passwd = await readFile(join(root, 'etc/passwd'), 'utf8');
    expect(passwd).toMatch(/^root:x:0:0:/m);
    expect(passwd).toMatch(/^user:x:1000:1000:/m);
    expect(passwd).toMatch(/^nobody:x:65534:/m);
    expect((await lstat(join(root, 'tmp'))).mode & 0o7777).toBe(0o1777);
    expect((await lstat(join(root, 'home/user'))).uid).toBe(1000);
  });

  test('materialize gives a container its own copy: writes there never reach the image', async () => {
    const image = await store.resolve('busybox');
    const copy = join(dir, 'container-rootfs');
    await store.materialize(id, copy);
    await writeFile(join(copy, 'etc/passwd'), 'changed\n');
    expect(await readFile(join(image?.rootfs as string, 'etc/passwd'), 'utf8')).toMatch(/^root:/);
    expect(execFileSync(join(copy, 'bin/busybox'), ['echo', 'ok']).toString()).toBe('ok\n');
    await expect(store.materialize(id, copy)).rejects.toThrow(/already exists/);
  });

  test('a name that already means another image keeps it: the seed fills only free names', async () => {
    const other = await ImageStore.open(join(dir, 'c'));
    await other.load(streamOf(await archiveOf([await tarOf([{ name: 'real', content: 'pulled' }])], 'busybox:latest')));
    const pulled = (await other.inspect('busybox:latest')).Id;
    expect(await other.seedBusybox(['busybox:latest', 'alpine:latest'])).toBe(id);
    expect((await other.inspect('busybox:latest')).Id).toBe(pulled);
    expect((await other.inspect('alpine:latest')).Id).toBe(id);
  });

  test('the index survives a reopen', async () => {
    const reopened = await ImageStore.open(join(dir, 'a'));
    const list = await reopened.list();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ Id: id, RepoTags: ['busybox:latest', 'alpine:latest'] });
  });
});
