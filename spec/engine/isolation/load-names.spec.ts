import { afterAll, describe, expect, test } from '@jest/globals';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { pack } from 'tar-stream';
import { adminPredicate, tenancyPolicy } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { holdArchive } from '../../../lib/engine/images/archive/hold-archive.js';
import { describeWithPeers, dockerd } from '../../support/peers.js';
import { as, policyApp } from '../policy/support.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call } = tenantSandbox('dockgate-iso-load');

/** A tar of the given members: files, or symlinks where `linkname` is given. */
async function tarOf(members: { name: string; body?: Buffer; linkname?: string }[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const ended = (async () => {
    for await (const c of archive as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const m of members) {
    await new Promise<void>((resolve, reject) => {
      const header = m.linkname !== undefined ? { name: m.name, type: 'symlink' as const, linkname: m.linkname } : { name: m.name, size: m.body!.length };
      archive.entry(header, m.body ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
    });
  }
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A docker-archive naming `tag`, its manifest stored under `manifestName` (`link`: a symlink to it), padded to `pad` bytes. */
async function evilArchive(marker: string, manifestName: string, pad = 0, tag = 'busybox:latest'): Promise<{ tar: Buffer; id: string }> {
  const layer = await tarOf([{ name: 'pwned', body: Buffer.from(`${marker}\n`) }]);
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['cat', '/pwned'] }, rootfs: { type: 'layers', diff_ids: [sha256(layer)] } }));
  const manifest = JSON.stringify([{ Config: 'config.json', RepoTags: [tag], Layers: ['layer/layer.tar'] }]);
  const members = [
    { name: 'layer/layer.tar', body: layer },
    { name: 'config.json', body: config },
    ...(manifestName === 'link'
      ? [{ name: 'names.json', body: Buffer.from(manifest) }, { name: 'manifest.json', linkname: 'names.json' }]
      : [{ name: manifestName, body: Buffer.from(manifest + ' '.repeat(Math.max(0, pad - manifest.length))) }]),
  ];
  return { tar: await tarOf(members), id: sha256(config) };
}

d('docker load: the name policy judges the names the loader itself parsed, before any tag is written', () => {
  const cases: [string, string, number][] = [
    ['a manifest named /manifest.json', '/manifest.json', 0],
    ['a manifest named x/../manifest.json', 'x/../manifest.json', 0],
    ['a manifest.json padded to 5 MiB', 'manifest.json', 5 * 1024 * 1024],
    ['a manifest.json that is a symlink to another member', 'link', 0],
  ];
  for (const [title, manifestName, pad] of cases) {
    test(`${title} naming busybox:latest is refused (403 naming it) and busybox stays the administrator's`, async () => {
      const before = (await call('alice', 'GET', '/images/busybox:latest/json')).json.Id as string;
      const { tar, id } = await evilArchive(title, manifestName, pad);
      const res = await call('bob', 'POST', '/images/load?quiet=1', tar);
      expect({ status: res.status, message: res.json?.message }).toEqual({ status: 403, message: 'busybox:latest is not in your namespace (bob/…): only administrators may write it' });
      const after = (await call('alice', 'GET', '/images/busybox:latest/json')).json.Id as string;
      expect(after).not.toBe(id);
      expect(after).toBe(before);
    });
  }

  test('the same archive under his own name (bob/…) loads', async () => {
    const { tar, id } = await evilArchive('own', '/manifest.json', 0, 'bob/box:latest');
    const res = await call('bob', 'POST', '/images/load?quiet=1', tar);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toContain('Loaded image: bob/box:latest');
    expect((await call('bob', 'GET', '/images/bob/box:latest/json')).json.Id).toBe(id);
  });
});

describeWithPeers('docker load through dockerd: the held archive\'s names are read as an extraction resolves them', [dockerd()], () => {
  const runtime = dockerRuntime();
  const app = policyApp(runtime, tenancyPolicy({ admin: adminPredicate({ subjects: ['alice'] }) }));
  afterAll(async () => runtime.close?.());

  test('/manifest.json, x/../manifest.json, a 5 MiB manifest and a linked one naming a shared tag are refused before dockerd reads them', async () => {
    for (const [manifestName, pad] of [['/manifest.json', 0], ['x/../manifest.json', 0], ['manifest.json', 5 * 1024 * 1024], ['link', 0]] as const) {
      const { tar } = await evilArchive(manifestName, manifestName, pad, 'busybox:dockgate-iso-load');
      const res = await as(app, 'bob').post('/v1.41/images/load?quiet=1').set('Content-Type', 'application/x-tar').send(tar);
      expect({ manifestName, status: res.status, body: res.body }).toEqual({ manifestName, status: 403, body: { message: 'busybox:dockgate-iso-load is not in your namespace (bob/…): only administrators may write it' } });
    }
    expect((await as(app, 'alice').get('/v1.41/images/busybox:dockgate-iso-load/json')).status).toBe(404);
  });
});

describe('holdArchive (the docker runtime\'s reading) finds every name a loader could tag', () => {
  test('through /manifest.json, x/../manifest.json, a 5 MiB manifest, a linked one and the legacy repositories file', async () => {
    for (const [manifestName, pad] of [['/manifest.json', 0], ['x/../manifest.json', 0], ['manifest.json', 5 * 1024 * 1024], ['link', 0]] as const) {
      const { tar } = await evilArchive(manifestName, manifestName, pad);
      const held = await holdArchive(Readable.from([tar]));
      held.stream.destroy();
      expect({ manifestName, names: held.names }).toEqual({ manifestName, names: ['busybox:latest'] });
    }
    const legacy = await tarOf([{ name: './repositories', body: Buffer.from(JSON.stringify({ busybox: { old: 'abc' } })) }]);
    const held = await holdArchive(Readable.from([legacy]));
    held.stream.destroy();
    expect(held.names).toEqual(['busybox:old']);
  });
  test('an index file that is not JSON is a 400, not skipped', async () => {
    await expect(holdArchive(Readable.from([await tarOf([{ name: 'manifest.json', body: Buffer.from('[{') }])]))).rejects.toMatchObject({ status: 400, message: 'invalid image archive: manifest.json is not JSON' });
  });
});
