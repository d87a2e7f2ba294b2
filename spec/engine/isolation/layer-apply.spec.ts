import { afterAll, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack, type Header } from 'tar-stream';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { call } = tenantSandbox('dockgate-iso-layer');
const host = mkdtempSync(join(tmpdir(), 'dockgate-host-'));
afterAll(() => rmSync(host, { recursive: true, force: true }));

type Member = Partial<Header> & { name: string; body?: string };

async function tarOf(members: Member[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const ended = (async () => {
    for await (const c of archive as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const { body, ...header } of members) {
    await new Promise<void>((resolve, reject) => {
      archive.entry({ ...header, mtime: header.mtime ?? new Date(0) }, Buffer.from(body ?? ''), (err) => (err ? reject(err) : resolve()));
    });
  }
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A docker-archive of busybox's root plus the given layers, tagged `tag`. */
async function imageArchive(tag: string, layers: Member[][]): Promise<Buffer> {
  const tars = await Promise.all(layers.map(tarOf));
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['true'] }, rootfs: { type: 'layers', diff_ids: tars.map(sha256) } }));
  const manifest = JSON.stringify([{ Config: 'config.json', RepoTags: [tag], Layers: tars.map((_, i) => `l${i}/layer.tar`) }]);
  return rawArchive(tars, config, manifest);
}

/** The docker-archive members: each layer tar, the config and the manifest. */
function rawArchive(tars: Buffer[], config: Buffer, manifest: string): Promise<Buffer> {
  return rawMembers([...tars.map((t, i): [string, Buffer] => [`l${i}/layer.tar`, t]), ['config.json', config], ['manifest.json', Buffer.from(manifest)]]);
}

/** A tar of regular files with the given bytes. */
async function rawMembers(members: [string, Buffer][]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const ended = (async () => {
    for await (const c of archive as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const [name, body] of members) {
    await new Promise<void>((resolve, reject) => archive.entry({ name, size: body.length }, body, (err) => (err ? reject(err) : resolve())));
  }
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** Loads the layers as bob's image, then creates and starts a container of it (its root is unpacked on the host then). */
async function loadAndRun(name: string, layers: Member[][]): Promise<number> {
  const loaded = await call('bob', 'POST', '/images/load?quiet=1', await imageArchive(`bob/${name}:latest`, layers));
  expect(loaded.status).toBe(200);
  const created = await call('bob', 'POST', '/containers/create', { Image: `bob/${name}`, Cmd: ['true'] });
  if (created.status !== 201) return created.status;
  const started = await call('bob', 'POST', `/containers/${created.json.Id}/start`);
  await call('bob', 'DELETE', `/containers/${created.json.Id}?force=1`);
  return started.status;
}

/** A host folder with one root-only file, and what it holds now. */
function hostDir(name: string): { dir: string; file: string; state: () => unknown } {
  const dir = join(host, name);
  mkdirSync(dir, { mode: 0o700 });
  const file = join(dir, 'keep');
  writeFileSync(file, 'host bytes\n', { mode: 0o600 });
  return {
    dir,
    file,
    state: () => {
      const d = statSync(dir);
      const f = existsSync(file) ? statSync(file) : undefined;
      return { names: readdirSync(dir), dirMode: d.mode, dirUid: d.uid, text: f ? readFileSync(file, 'utf8') : undefined, mode: f?.mode, uid: f?.uid, mtime: f?.mtimeMs };
    },
  };
}

describeWithPeers('an image layer is applied without following a link it or a lower layer made, the final name included', [bwrap], () => {
  test('an opaque whiteout under a link (d -> host folder, then d/.wh..wh..opq) removes nothing of the host folder', async () => {
    const victim = hostDir('opaque');
    const before = victim.state();
    const status = await loadAndRun('opaque', [[
      { name: 'd', type: 'symlink', linkname: victim.dir },
      { name: 'd/.wh..wh..opq', type: 'file', size: 0, body: '' },
    ]]);
    expect(status).toBeLessThan(500);
    expect(victim.state()).toEqual(before);
  }, 60_000);

  test('the opaque whiteout in a later layer, over a link of a lower one, removes nothing of the host folder', async () => {
    const victim = hostDir('opaque2');
    const before = victim.state();
    const status = await loadAndRun('opaque2', [
      [{ name: 'd', type: 'symlink', linkname: victim.dir }],
      [{ name: 'd/', type: 'directory', mode: 0o777 }, { name: 'd/.wh..wh..opq', type: 'file', size: 0, body: '' }],
    ]);
    expect(status).toBeLessThan(500);
    expect(victim.state()).toEqual(before);
  }, 60_000);

  test('a whiteout naming a file through a link to a host folder (d -> host, then d/.wh.keep) removes nothing there', async () => {
    const victim = hostDir('whiteout');
    const before = victim.state();
    const status = await loadAndRun('whiteout', [
      [{ name: 'd', type: 'symlink', linkname: victim.dir }],
      [{ name: 'd/.wh.keep', type: 'file', size: 0, body: '' }],
    ]);
    expect(status).toBeLessThan(500);
    expect(victim.state()).toEqual(before);
  }, 60_000);

  test('a file, a directory, a FIFO and a hard link over links to host files write, chmod and chown none of them', async () => {
    const victim = hostDir('final');
    const before = victim.state();
    const status = await loadAndRun('final', [
      [
        { name: 'f', type: 'symlink', linkname: victim.file },
        { name: 'dir', type: 'symlink', linkname: victim.dir },
        { name: 'p', type: 'symlink', linkname: victim.file },
        { name: 'h', type: 'symlink', linkname: victim.file },
      ],
      [
        { name: 'f', type: 'file', mode: 0o4777, uid: 1234, gid: 1234, mtime: new Date(1000), size: 6, body: 'pwned\n' },
        { name: 'dir/', type: 'directory', mode: 0o777, uid: 1234, gid: 1234 },
        { name: 'p', type: 'fifo', mode: 0o777, uid: 1234, gid: 1234 },
        { name: 'hl', type: 'link', linkname: 'h' },
        { name: 'h', type: 'file', mode: 0o777, uid: 1234, gid: 1234, size: 6, body: 'pwned\n' },
      ],
    ]);
    expect(status).toBeLessThan(500);
    expect(victim.state()).toEqual(before);
  }, 60_000);

  test('entries below a link to a host folder land inside the image (the link resolved as a chroot would)', async () => {
    const victim = hostDir('below');
    const before = victim.state();
    const status = await loadAndRun('below', [[
      { name: 'd', type: 'symlink', linkname: victim.dir },
      { name: 'd/keep', type: 'file', mode: 0o777, size: 6, body: 'pwned\n' },
      { name: 'd/new/', type: 'directory', mode: 0o777 },
      { name: 'up', type: 'symlink', linkname: '../../../../../../..' },
      { name: `up${victim.dir}/keep`, type: 'file', size: 6, body: 'pwned\n' },
    ]]);
    expect(status).toBeLessThan(500);
    expect(victim.state()).toEqual(before);
  }, 60_000);

  test('ADD of a local archive holding the same (d -> host folder, then d/.wh..wh..opq) removes nothing of the host folder', async () => {
    const victim = hostDir('add');
    const before = victim.state();
    const archive = await tarOf([
      { name: 'd', type: 'symlink', linkname: victim.dir },
      { name: 'd/.wh..wh..opq', type: 'file', size: 0, body: '' },
    ]);
    const context = await rawMembers([['evil.tar', archive], ['Dockerfile', Buffer.from('FROM busybox\nADD evil.tar /x/\n')]]);
    const answer = await call('bob', 'POST', '/build?rm=1&t=bob/add', context);
    expect(answer.status).toBeLessThan(500);
    expect(victim.state()).toEqual(before);
  }, 60_000);
});
