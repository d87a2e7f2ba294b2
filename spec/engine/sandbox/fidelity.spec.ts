import { describe, test, expect, afterAll } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { pack } from 'tar-stream';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { withoutMountedPaths } from '../../../lib/engine/runtime/local/mounted-paths.js';
import { cgroupInfo } from '../../../lib/engine/runtime/sandbox/cgroup-info.js';
import { Cgroups } from '../../../lib/engine/linux/cgroups.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { testApp } from '../helpers.js';

// Issue 25 on the sandbox runtime over HTTP; the docker-py interop spec holds the same answers
// against dockerd (spec/interop/engine-sdk/fidelity.spec.ts).
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const runtime = hasBwrap ? sandboxRuntime({ stateDir: mkdtempSync(join(tmpdir(), 'dockgate-fidelity-')) }) : undefined;
const app = runtime ? testApp(runtime, '1.24-1.41') : undefined;
afterAll(async () => {
  await runtime?.close?.();
});

async function tarOf(entries: { name: string; data?: Buffer; type?: 'directory' | 'symlink'; linkname?: string }[]): Promise<Buffer> {
  const p = pack();
  // Read while writing: an entry's callback waits for the pack stream to be drained.
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of p as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const e of entries) {
    await new Promise<void>((resolve, reject) => {
      const header = { name: e.name, type: e.type ?? 'file', mode: e.type === 'directory' || e.name.startsWith('bin/busybox') ? 0o755 : 0o644, ...(e.linkname ? { linkname: e.linkname } : {}) } as const;
      if (e.data) p.entry(header, e.data, (err) => (err ? reject(err) : resolve()));
      else p.entry(header, (err) => (err ? reject(err) : resolve()));
    });
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** An image of /bin/busybox and a few links, with no /dev, /proc, /sys or /etc: what an engine adds for those would show in diff. */
async function bareBusybox(tag: string): Promise<Buffer> {
  const layer = await tarOf([
    { name: 'bin', type: 'directory' },
    { name: 'bin/busybox', data: readFileSync('/bin/busybox') },
    ...['sh', 'sleep', 'dd', 'mkdir', 'echo', 'true'].map((t) => ({ name: `bin/${t}`, type: 'symlink' as const, linkname: 'busybox' })),
  ]);
  const diffId = `sha256:${createHash('sha256').update(layer).digest('hex')}`;
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'], Env: ['PATH=/bin'] }, rootfs: { type: 'layers', diff_ids: [diffId] } }));
  return tarOf([
    { name: 'layer.tar', data: layer },
    { name: 'config.json', data: config },
    { name: 'manifest.json', data: Buffer.from(JSON.stringify([{ Config: 'config.json', RepoTags: [tag], Layers: ['layer.tar'] }])) },
  ]);
}

async function ran(image: string, cmd: string[]): Promise<string> {
  const created = await request(app!).post('/v1.41/containers/create').send({ Image: image, Cmd: cmd, Labels: { fidelity: '1' } });
  expect(created.status).toBe(201);
  expect((await request(app!).post(`/v1.41/containers/${created.body.Id}/start`)).status).toBe(204);
  expect((await request(app!).post(`/v1.41/containers/${created.body.Id}/wait`)).body.StatusCode).toBe(0);
  return created.body.Id as string;
}

describeWithPeers('POST /images/load of a bad archive: 200, the error in the JSON stream (as dockerd)', [bwrap], () => {
  test.each(['', '?quiet=1', '?quiet=0'])('load%s of bytes that are no tar archive', async (query) => {
    const res = await request(app!).post(`/v1.41/images/load${query}`).set('Content-Type', 'application/x-tar').send(Buffer.from('not a tar archive'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const message = 'invalid tar archive: Unexpected end of data';
    expect(res.text).toBe(`${JSON.stringify({ errorDetail: { message }, error: message })}\n`);
  });
  test('a tar without manifest.json names what is missing, in the stream', async () => {
    const res = await request(app!).post('/v1.41/images/load').set('Content-Type', 'application/x-tar').send(await tarOf([{ name: 'README', data: Buffer.from('hi') }]));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ errorDetail: { message: 'invalid image archive: neither manifest.json nor index.json found' }, error: 'invalid image archive: neither manifest.json nor index.json found' });
  });
});

describeWithPeers('docker diff leaves out what dockerd never lists; prune reports what was written', [bwrap], () => {
  const tag = 'fidelity/bare:1';
  test('an image without /dev, /proc and /etc: a container that wrote nothing has no changes (null)', async () => {
    const load = await request(app!).post('/v1.41/images/load?quiet=1').set('Content-Type', 'application/x-tar').send(await bareBusybox(tag));
    expect(load.text).toContain('Loaded image: fidelity/bare:1');
    const id = await ran(tag, ['true']);
    const diff = await request(app!).get(`/v1.41/containers/${id}/changes`);
    expect(diff.status).toBe(200);
    expect(diff.body).toBeNull();
  });
  test('written files are listed; /etc, which dockerd\'s init layer holds, shows as modified', async () => {
    const id = await ran(tag, ['sh', '-c', 'mkdir -p /etc /data && echo x > /etc/foo && echo abc > /data/g']);
    expect((await request(app!).get(`/v1.41/containers/${id}/changes`)).body).toEqual([
      { Path: '/data', Kind: 1 }, { Path: '/data/g', Kind: 1 }, { Path: '/etc', Kind: 0 }, { Path: '/etc/foo', Kind: 1 },
    ]);
  });
  test('prune\'s SpaceReclaimed is the bytes of the removed containers\' written files', async () => {
    await request(app!).post('/v1.41/containers/prune');
    await ran(tag, ['sh', '-c', 'mkdir /d && dd if=/dev/zero of=/d/f bs=1024 count=100 2>/dev/null']);
    await ran(tag, ['sh', '-c', 'echo abc > /x']);
    await ran(tag, ['true']);
    const pruned = await request(app!).post(`/v1.41/containers/prune?filters=${encodeURIComponent('{"label":["fidelity=1"]}')}`);
    expect(pruned.status).toBe(200);
    expect(pruned.body.ContainersDeleted).toHaveLength(3);
    expect(pruned.body.SpaceReclaimed).toBe(100 * 1024 + 4);
  });
});

describe('which diff entries are mounts or init-layer files (dockerd lists none of them)', () => {
  test('/dev, /proc and /sys and all below them, and the init layer\'s files, go', () => {
    const changes = ['/dev', '/dev/shm', '/proc', '/sys', '/sys/fs', '/.dockerenv', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/etc/mtab', '/device', '/tmp/x']
      .map((Path) => ({ Path, Kind: 1 as const }));
    expect(withoutMountedPaths(changes)).toEqual([{ Path: '/device', Kind: 1 }, { Path: '/tmp/x', Kind: 1 }]);
  });
  test('an added /etc goes, or is modified when something was written below it', () => {
    expect(withoutMountedPaths([{ Path: '/etc', Kind: 1 }, { Path: '/etc/hosts', Kind: 1 }])).toEqual([]);
    expect(withoutMountedPaths([{ Path: '/etc', Kind: 1 }, { Path: '/etc/app', Kind: 1 }])).toEqual([{ Path: '/etc', Kind: 0 }, { Path: '/etc/app', Kind: 1 }]);
    expect(withoutMountedPaths([{ Path: '/etc', Kind: 0 }, { Path: '/etc/passwd', Kind: 0 }])).toEqual([{ Path: '/etc', Kind: 0 }, { Path: '/etc/passwd', Kind: 0 }]);
  });
  test('an image\'s own /etc changed only by the mount points made in it (hostname, hosts, resolv.conf) is not listed; with a write of the container\'s below it, it is', () => {
    expect(withoutMountedPaths([{ Path: '/etc', Kind: 0 }, { Path: '/etc/hostname', Kind: 1 }, { Path: '/etc/resolv.conf', Kind: 1 }])).toEqual([]);
    expect(withoutMountedPaths([{ Path: '/etc', Kind: 0 }, { Path: '/etc/hostname', Kind: 1 }, { Path: '/etc/app', Kind: 1 }])).toEqual([{ Path: '/etc', Kind: 0 }, { Path: '/etc/app', Kind: 1 }]);
  });
});

describe('/info of the sandbox says what it can limit, and dockerd\'s warning for each thing it cannot', () => {
  test('no manageable cgroup controller: every limit false, no cgroup driver, dockerd\'s warnings', () => {
    const info = cgroupInfo(undefined);
    expect(info).toMatchObject({ MemoryLimit: false, SwapLimit: false, KernelMemory: false, KernelMemoryTCP: false, CpuCfsPeriod: false, CpuCfsQuota: false, CPUShares: false, CPUSet: false, PidsLimit: false, OomKillDisable: false, CgroupDriver: 'none', CgroupVersion: '' });
    expect(info.Warnings).toEqual(expect.arrayContaining(['WARNING: No memory limit support', 'WARNING: No cpu cfs quota support', 'WARNING: No cpuset support']));
  });
  test.each([[undefined, true], [false, false]])('sandboxRuntime({ cgroups: %s }) reports MemoryLimit accordingly where the memory cgroup is manageable', async (cgroups, expected) => {
    const r = sandboxRuntime({ stateDir: mkdtempSync(join(tmpdir(), 'dockgate-fidelity-')), ...(cgroups === undefined ? {} : { cgroups }) });
    try {
      const info = (await request(testApp(r, '1.24-1.41')).get('/v1.41/info')).body;
      const manageable = Cgroups.detect().controllers.includes('memory');
      expect(info.MemoryLimit).toBe(expected && manageable);
      expect(info.KernelMemory).toBe(false);
      expect(info.CPUSet).toBe(expected && Cgroups.detect().controllers.includes('cpuset'));
    } finally {
      await r.close?.();
    }
  });
});
