import { test, expect, afterAll } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describeWithPeers } from '../../support/peers.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { ImageStore } from '../../../lib/engine/images/index.js';
import { CGROUPS_V1, SANDBOX_PEERS, sandboxCli } from '../support/sandbox-cli.js';
import { oneLayerArchive } from '../support/image-archive.js';

/** The host directory of a container's group in the v1 hierarchy of `controller`, under this server's own group. */
function groupDir(controller: string, id: string): string {
  const root = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => new RegExp(` - cgroup \\S+ \\S*\\b${controller}\\b`).test(l))!.split(' ')[4]!;
  const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.split(':')[1]?.split(',').includes(controller))!.split(':')[2]!;
  return join(root, own, 'dockgate', id);
}

describeWithPeers('sandbox runtime: default limits bound every container (pids 2048, tmpfs 64 MiB), changeable in the options', [...SANDBOX_PEERS, CGROUPS_V1], () => {
  const sandbox = sandboxCli();
  const small = sandboxCli({ pidsLimit: 8, tmpfsSize: 1024 * 1024 });
  afterAll(async () => {
    await sandbox.close();
    await small.close();
  });

  test('a container that sets no --pids-limit runs with pids.max 2048 (podman\'s default)', async () => {
    const name = `dg-pids-default-${Date.now()}`;
    const started = await sandbox.cli('run', '-d', '--name', name, 'busybox', 'sleep', '60');
    expect(started.code).toBe(0);
    expect(readFileSync(join(groupDir('pids', started.stdout.trim()), 'pids.max'), 'utf8').trim()).toBe('2048');
    await sandbox.cli('rm', '-f', name);
  });
  test('option pidsLimit: 8 bounds a container that sets none: a loop of 12 background sleeps cannot fork them all', async () => {
    const r = await small.cli('run', '--rm', 'busybox', 'sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait');
    expect(r.stderr).toContain("can't fork");
  });
  test('--pids-limit in the create body still wins over the default', async () => {
    const r = await small.cli('run', '--rm', '--pids-limit', '64', 'busybox', 'sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 0.2 & done; wait; echo all');
    expect(r).toMatchObject({ code: 0, stdout: 'all\n' });
  });

  test('--tmpfs without size= is capped at 64 MiB: df shows it, writing beyond fails with ENOSPC', async () => {
    const r = await sandbox.cli('run', '--rm', '--tmpfs', '/t', 'busybox', 'sh', '-c', 'df -k /t | tail -1; head -c 70000000 /dev/zero > /t/big; echo rc=$?; wc -c < /t/big');
    expect(r.stdout).toMatch(/^\S+\s+65536\s/);
    expect(r.stdout).toMatch(/rc=1\n67108864\n$/);
  });
  test('--tmpfs /t:size=512k,mode=1777 is honored: a 512 KiB tmpfs whose root has mode 1777', async () => {
    const r = await sandbox.cli('run', '--rm', '--tmpfs', '/t:size=512k,mode=1777', 'busybox', 'sh', '-c', 'df -k /t | tail -1; stat -c %a /t; head -c 600000 /dev/zero > /t/big; echo rc=$?');
    expect(r.stdout).toMatch(/^\S+\s+512\s/);
    expect(r.stdout).toMatch(/\n1777\nrc=1\n$/);
  });
  test('a tmpfs size over the cap is refused at create, naming the cap and its option', async () => {
    const r = await small.cli('run', '--rm', '--tmpfs', '/t:size=2m', 'busybox', 'true');
    expect(r.code).toBe(125);
    expect(r.stderr).toContain('HostConfig.Tmpfs "/t": size 2m is more than this server\'s tmpfs cap of 1048576 bytes (sandboxRuntime option "tmpfsSize")');
  });
  test('an unsupported tmpfs option is refused naming it', async () => {
    const r = await sandbox.cli('run', '--rm', '--tmpfs', '/t:uid=1000', 'busybox', 'true');
    expect(r.code).toBe(125);
    expect(r.stderr).toContain('HostConfig.Tmpfs "/t": option "uid=1000" is not supported by the sandbox runtime');
  });
  test('an exec sees the files the container wrote to its sized tmpfs', async () => {
    const name = `dg-tmpfs-exec-${Date.now()}`;
    expect((await sandbox.cli('run', '-d', '--name', name, '--tmpfs', '/t:size=1m', 'busybox', 'sh', '-c', 'echo hi > /t/f; sleep 60')).code).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect((await sandbox.cli('exec', name, 'sh', '-c', 'cat /t/f; df -k /t | tail -1')).stdout).toMatch(/^hi\n\S+\s+1024\s/);
    await sandbox.cli('rm', '-f', name);
  });
});

describeWithPeers('sandbox runtime: docker load archives and pulled layers have a size cap', SANDBOX_PEERS, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-state-'));
  const capped = sandboxCli({ stateDir, maxLoadBytes: 64 * 1024 });
  afterAll(async () => {
    await capped.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('docker load of an archive over maxLoadBytes fails naming the cap, and nothing of it stays in the spool', async () => {
    const archive = await oneLayerArchive('dg/big:1', [{ header: { name: 'big', type: 'file', mode: 0o644, size: 200_000 }, body: Buffer.alloc(200_000, 1) }]);
    const r = await capped.cliWithInput(archive, 'load');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('the image archive is larger than this server\'s limit of 65536 bytes (option "maxLoadBytes")');
    expect(readdirSync(join(stateDir, 'images', 'tmp'))).toEqual([]);
    expect((await capped.cli('image', 'inspect', 'dg/big:1')).code).not.toBe(0);
  });
  test('an archive under the cap loads', async () => {
    const archive = await oneLayerArchive('dg/small:1', [{ header: { name: 'small', type: 'file', mode: 0o644, size: 1000 }, body: Buffer.alloc(1000, 1) }]);
    expect(await capped.cliWithInput(archive, 'load')).toMatchObject({ code: 0, stdout: 'Loaded image: dg/small:1\n' });
  });
  test('a layer over maxLayerBytes is refused while it is stored (what a pull writes through), naming the cap; nothing is kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-store-'));
    const store = await ImageStore.open(dir, { maxLayerBytes: 10_000 });
    await expect(store.files.importLayer(Readable.from([Buffer.alloc(6000), Buffer.alloc(6000)]))).rejects.toThrow('the layer is larger than this server\'s limit of 10000 bytes (option "maxLayerBytes")');
    expect(readdirSync(join(dir, 'layers'))).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describeWithPeers('sandboxRuntime limit options are validated once, at construction', SANDBOX_PEERS, () => {
  test.each(['pidsLimit', 'tmpfsSize', 'maxLoadBytes', 'maxLayerBytes'])('%s must be a positive integer', (option) => {
    expect(() => sandboxRuntime({ [option]: 0 })).toThrow(`sandboxRuntime option "${option}" must be a positive integer`);
    expect(() => sandboxRuntime({ [option]: '1m' as unknown as number })).toThrow(`sandboxRuntime option "${option}" must be a positive integer`);
  });
  test('pidsLimit without a manageable pids cgroup (cgroups: false) is refused', () => {
    expect(() => sandboxRuntime({ cgroups: false, pidsLimit: 100 })).toThrow('sandboxRuntime option "pidsLimit" needs the cgroup v1 pids controller');
  });
});
