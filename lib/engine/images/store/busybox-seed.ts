import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Readable } from 'node:stream';
import { pack, type Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImageStoreCore } from '../store-core.js';
import { serverPlatform } from './platform.js';
import { sha256Of } from './digest.js';

const run = promisify(execFile);

/** Every entry carries this time, so the same busybox binary always gives the same digests. */
const EPOCH = new Date('2024-01-01T00:00:00Z');
const CREATED = EPOCH.toISOString();

const PASSWD = [
  'root:x:0:0:root:/root:/bin/sh',
  'user:x:1000:1000:user:/home/user:/bin/sh',
  'nobody:x:65534:65534:nobody:/nonexistent:/bin/false',
  '',
].join('\n');
const GROUP = ['root:x:0:', 'user:x:1000:', 'nogroup:x:65534:', ''].join('\n');

const DIRECTORIES: [string, number, number?][] = [
  ['bin', 0o755], ['dev', 0o755], ['etc', 0o755], ['home', 0o755], ['home/user', 0o755, 1000], ['proc', 0o555],
  ['root', 0o700], ['sbin', 0o755], ['sys', 0o555], ['tmp', 0o1777], ['usr', 0o755], ['usr/bin', 0o755], ['usr/sbin', 0o755],
  ['var', 0o755], ['var/tmp', 0o1777],
];

/**
 * Builds the offline `busybox` image: one layer made from Debian's busybox-static
 * (`/bin/busybox`, a symbolic link per applet where `busybox --list-full` puts it, /etc/passwd
 * and /etc/group with root, a uid-1000 `user` and nobody, and /tmp), with fixed times and
 * ordering so the same binary always yields the same layer and image IDs. Only names that do not
 * already name an image are tagged (a pulled `busybox:latest` is never replaced). Answers the
 * seed's image ID.
 */
export async function buildBusyboxSeed(store: ImageStoreCore, tags: string[], binary = '/bin/busybox'): Promise<string> {
  let program: Buffer;
  let applets: string[];
  try {
    program = await readFile(binary);
    applets = (await run(binary, ['--list-full'])).stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  } catch (err) {
    throw EngineError.system(`cannot build the busybox image: ${binary} is missing or does not run (install the Debian package busybox-static)`, err);
  }
  const archive = pack();
  const add = (header: Partial<Headers> & { name: string }, body?: Buffer) => new Promise<void>((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    const h: Headers = Object.assign({ uid: 0, gid: 0, mtime: EPOCH, uname: '', gname: '' }, header) as Headers;
    if (body) archive.entry(h, body, done);
    else archive.entry(h, done);
  });
  const writing = (async () => {
    // A rootless store holds root's files only (store option onlyRootOwners): user's home is root's there.
    const owner = (uid: number | undefined): number => (store.options.onlyRootOwners ? 0 : uid ?? 0);
    for (const [name, mode, uid] of DIRECTORIES) await add({ name: `${name}/`, type: 'directory', mode, uid: owner(uid), gid: owner(uid) });
    await add({ name: 'bin/busybox', type: 'file', mode: 0o755, size: program.length }, program);
    await add({ name: 'etc/passwd', type: 'file', mode: 0o644 }, Buffer.from(PASSWD));
    await add({ name: 'etc/group', type: 'file', mode: 0o644 }, Buffer.from(GROUP));
    const links = [...new Set(applets)].filter((p) => p !== 'bin/busybox' && /^(?:usr\/)?s?bin\/[^/]+$/.test(p)).sort();
    for (const name of links) await add({ name, type: 'symlink', linkname: '/bin/busybox', mode: 0o777 });
    archive.finalize();
  })();
  writing.catch((err: Error) => archive.destroy(err));
  const layer = await store.files.importLayer(Readable.from(archive as AsyncIterable<Buffer>, { objectMode: false }));
  await writing;
  const [os, architecture] = serverPlatform().split('/') as [string, string];
  const config = {
    architecture,
    config: {
      Cmd: ['sh'],
      Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      Labels: { 'org.opencontainers.image.description': 'busybox-static as a one-layer image, built offline by dockgate' },
    },
    created: CREATED,
    history: [{ created: CREATED, created_by: 'dockgate: busybox-static /bin/busybox with its applet links, /etc/passwd, /etc/group, /tmp' }],
    os,
    rootfs: { type: 'layers', diff_ids: [layer.diffId] },
  };
  const bytes = Buffer.from(JSON.stringify(config));
  // A name that already means an image (a real busybox pulled or loaded) keeps it: the seed only fills free names.
  const free = tags.filter((tag) => store.record(tag) === undefined);
  const id = sha256Of(bytes);
  if (free.length === 0 && store.record(id) === undefined) {
    if (!store.records().some((r) => r.layers.some((l) => l.diffId === layer.diffId))) await store.files.discard(layer.diffId);
    return id;
  }
  await store.commit({ config: bytes, layers: [layer], tags: free });
  return id;
}
