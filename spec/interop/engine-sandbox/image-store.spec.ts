import { test, expect, afterAll } from '@jest/globals';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { describeWithPeers } from '../../support/peers.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { testApp } from '../../engine/helpers.js';
import { SANDBOX_PEERS, sandboxCli } from '../support/sandbox-cli.js';
import { oneLayerArchive } from '../support/image-archive.js';

/** Every path under `dir` (not following links), with its lstat. */
function walk(dir: string, out: { path: string; mode: number; kind: string }[] = []): typeof out {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    const kind = st.isCharacterDevice() ? 'char' : st.isBlockDevice() ? 'block' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
    out.push({ path, mode: st.mode, kind });
    if (st.isDirectory()) walk(path, out);
  }
  return out;
}

/** An image that plants a setuid-root and a setgid binary, a 0666 character device and a block device. */
const planting = () => oneLayerArchive('dg/planted:1', [
  { header: { name: 'bin/', type: 'directory', mode: 0o755 } },
  { header: { name: 'bin/idsuid', type: 'file', mode: 0o4755, size: 4 }, body: Buffer.from('#!x\n') },
  { header: { name: 'bin/idsgid', type: 'file', mode: 0o2755, size: 4 }, body: Buffer.from('#!x\n') },
  { header: { name: 'dev/', type: 'directory', mode: 0o755 } },
  { header: { name: 'dev/mem-copy', type: 'character-device', mode: 0o666, devmajor: 1, devminor: 1 } },
  { header: { name: 'tmp/', type: 'directory', mode: 0o1777 } },
  { header: { name: 'tmp/disk', type: 'block-device', mode: 0o666, devmajor: 8, devminor: 0 } },
  { header: { name: 'tmp/fifo', type: 'fifo', mode: 0o644 } },
]);

describeWithPeers('sandbox runtime: the image store holds nothing a host user could use, under root-only directories', SANDBOX_PEERS, () => {
  // The state directory exists already, world-traversable: the runtime makes it private anyway.
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-state-'));
  chmodSync(stateDir, 0o755);
  mkdirSync(join(stateDir, 'containers'), { mode: 0o755 });
  mkdirSync(join(stateDir, 'images', 'rootfs'), { recursive: true, mode: 0o755 });
  const sandbox = sandboxCli({ stateDir });
  afterAll(async () => {
    await sandbox.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('docker load of an image with setuid/setgid binaries and device nodes: the store holds no setuid or setgid file and no device node', async () => {
    const r = await sandbox.cliWithInput(await planting(), 'load');
    expect(r).toMatchObject({ code: 0, stdout: 'Loaded image: dg/planted:1\n' });
    const stored = walk(join(stateDir, 'images'));
    expect(stored.some((e) => e.path.endsWith('/bin/idsuid'))).toBe(true);
    expect(stored.filter((e) => (e.mode & 0o6000) !== 0).map((e) => e.path)).toEqual([]);
    expect(stored.filter((e) => e.kind === 'char' || e.kind === 'block').map((e) => e.path)).toEqual([]);
    // The rest of the layer is there: the binaries keep their other bits, the FIFO is made.
    expect(stored.find((e) => e.path.endsWith('/bin/idsuid'))!.mode & 0o7777).toBe(0o755);
    expect(stored.find((e) => e.path.endsWith('/bin/idsgid'))!.mode & 0o7777).toBe(0o755);
    expect(stored.some((e) => e.path.endsWith('/tmp/fifo') && e.kind === 'other')).toBe(true);
  });

  test('the state directory, the image store and the containers directory are 0700 (made so though they existed, world-traversable)', async () => {
    expect((await sandbox.cli('run', '--rm', 'busybox', 'true')).code).toBe(0);
    for (const dir of ['', 'containers', 'images', 'images/rootfs', 'images/layers', 'images/blobs']) {
      expect({ dir, mode: (lstatSync(join(stateDir, dir)).mode & 0o777).toString(8) }).toEqual({ dir, mode: '700' });
    }
  });

  test('a container of the loaded image has no setuid file in its root filesystem (its overlay view) either', async () => {
    const name = `dg-planted-${Date.now()}`;
    expect((await sandbox.cli('create', '--name', name, 'dg/planted:1')).code).toBe(0);
    const id = (await sandbox.cli('inspect', '-f', '{{.Id}}', name)).stdout.trim();
    // The image has no /bin/sh: the start fails, after the root filesystem copy is made.
    await sandbox.cli('start', name);
    const files = walk(join(stateDir, 'overlays', id, 'merged'));
    expect(files.some((e) => e.path.endsWith('/bin/idsuid'))).toBe(true);
    expect(files.filter((e) => (e.mode & 0o6000) !== 0 || e.kind === 'char' || e.kind === 'block')).toEqual([]);
    await sandbox.cli('rm', '-f', name);
  });
});

describeWithPeers('sandbox runtime: a layer entry that cannot be applied is an error naming it in the load stream (200, as dockerd answers a failed load), never a 500', SANDBOX_PEERS, () => {
  const runtime = sandboxRuntime();
  const app = testApp(runtime);
  afterAll(async () => {
    await runtime.close?.();
  });
  /** dockerd answers a load that fails while reading with 200 and the error as the JSON stream's last message (engine-sandbox fidelity). */
  const load = async (archive: Buffer) => {
    const res = await request(app).post('/v1.28/images/load?quiet=1').set('Content-Type', 'application/x-tar').send(archive);
    const last = JSON.parse(res.text.trim().split('\n').pop()!) as { error?: string; errorDetail?: { message: string } };
    expect(last.errorDetail?.message).toBe(last.error);
    return { status: res.status, message: last.error ?? '' };
  };

  test('a hard link to /etc/shadow (outside the layer): "invalid layer: hard link … points to /etc/shadow"', async () => {
    const res = await load(await oneLayerArchive('dg/hardlink:1', [
      { header: { name: 'etc/', type: 'directory', mode: 0o755 } },
      { header: { name: 'etc/stolen', type: 'link', linkname: '/etc/shadow' } },
    ]));
    expect(res.status).toBe(200);
    expect(res.message).toMatch(/^invalid layer: hard link etc\/stolen points to \/etc\/shadow, which is not a file of the image/);
    expect(res.message).not.toContain(tmpdir());
  });
  test('a hard link climbing out with ../: an error naming the entry', async () => {
    const res = await load(await oneLayerArchive('dg/hardlink:2', [{ header: { name: 'x', type: 'link', linkname: '../../../etc/passwd' } }]));
    expect(res.status).toBe(200);
    expect(res.message).toContain('invalid layer: ../../../etc/passwd leaves the root');
  });
  test('a file whose parent is a regular file: an error naming the entry (the host path is not echoed)', async () => {
    const res = await load(await oneLayerArchive('dg/notdir:1', [
      { header: { name: 'a', type: 'file', mode: 0o644, size: 1 }, body: Buffer.from('a') },
      { header: { name: 'a/b', type: 'file', mode: 0o644, size: 1 }, body: Buffer.from('b') },
    ]));
    expect(res.status).toBe(200);
    expect(res.message).toMatch(/^invalid layer: entry a\/b cannot be applied \(E[A-Z]+\)$/);
  });
});
