import { afterAll, expect, test } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

/** The directory tenants may bind; `t` in it is writable by their containers (another container's bind). */
const allowed = mkdtempSync(join(tmpdir(), 'dockgate-allowed-'));
/** A host folder no tenant may see (listable, as most host folders are): a root-only marker file in it. */
const secret = mkdtempSync(join(tmpdir(), 'dockgate-secret-'));
chmodSync(secret, 0o755);
writeFileSync(join(secret, 'host-marker'), 'host only\n', { mode: 0o600 });
mkdirSync(join(allowed, 't'));
chmodSync(join(allowed, 't'), 0o777);
afterAll(() => {
  rmSync(allowed, { recursive: true, force: true });
  rmSync(secret, { recursive: true, force: true });
});

const engine = tenantSandbox('dockgate-iso-bindswap', { policy: { allowedBindDirs: [allowed] } });

/** bob's container A, with `ALLOWED/t` bound read-write, runs `script` there (at /t) to its end. */
async function inA(script: string): Promise<void> {
  const a = await engine.run('bob', { Cmd: ['sh', '-c', script], HostConfig: { Binds: [`${join(allowed, 't')}:/t`] } });
  expect(a).toMatchObject({ code: 0 });
}

/** Starts B as bob: its status and, when it ran, what `ls /x` listed. */
async function startListing(id: string): Promise<{ status: number; message?: string; out: string }> {
  const started = await engine.call('bob', 'POST', `/containers/${id}/start`);
  if (started.status !== 204) return { status: started.status, message: started.json?.message as string, out: '' };
  await engine.call('bob', 'POST', `/containers/${id}/wait`);
  const logs = await engine.call('bob', 'GET', `/containers/${id}/logs?stdout=1&stderr=1`);
  return { status: started.status, out: logs.body.toString() };
}

describeWithPeers('a bind source is resolved once at create: a link planted on its path later is never followed', [bwrap], () => {
  test('a directory swapped for a link to a host folder between create and start is refused at start (400 naming the bind)', async () => {
    await inA('mkdir /t/sub1 && echo mine > /t/sub1/tenant-file');
    const created = await engine.call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['ls', '/x'], HostConfig: { Binds: [`${join(allowed, 't', 'sub1')}:/x`] } });
    expect(created.status).toBe(201);
    await inA(`mv /t/sub1 /t/sub1.old && ln -s ${secret} /t/sub1`);
    const b = await startListing(created.json.Id as string);
    expect(b.out).not.toContain('host-marker');
    expect(b).toMatchObject({ status: 400, message: expect.stringMatching(/bind source .*sub1.* changed since the container was created: a symbolic link is now on its path/) });
  }, 60_000);

  test('a restart after the swap is refused too, and the bind shows its own directory while it is one', async () => {
    await inA('mkdir /t/sub2 && echo mine > /t/sub2/tenant-file');
    const created = await engine.call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['ls', '/x'], HostConfig: { Binds: [`${join(allowed, 't', 'sub2')}:/x`] } });
    expect(created.status).toBe(201);
    const first = await startListing(created.json.Id as string);
    expect(first).toMatchObject({ status: 204, out: expect.stringContaining('tenant-file') });
    await inA(`mv /t/sub2 /t/sub2.old && ln -s ${secret} /t/sub2`);
    const again = await startListing(created.json.Id as string);
    expect(again.out).not.toContain('host-marker');
    expect(again.status).toBe(400);
  }, 60_000);

  test('docker cp of a created container reads its bind through the walked source, and is refused once a link is on the path', async () => {
    await inA('mkdir /t/sub4 && echo mine > /t/sub4/tenant-file');
    const created = await engine.call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'], HostConfig: { Binds: [`${join(allowed, 't', 'sub4')}:/x`] } });
    expect(created.status).toBe(201);
    const own = await engine.call('bob', 'GET', `/containers/${created.json.Id as string}/archive?path=/x`);
    expect(own.status).toBe(200);
    expect(own.body.toString('latin1')).toContain('tenant-file');
    await inA(`mv /t/sub4 /t/sub4.old && ln -s ${secret} /t/sub4`);
    const swapped = await engine.call('bob', 'GET', `/containers/${created.json.Id as string}/archive?path=/x`);
    expect(swapped.body.toString('latin1')).not.toContain('host-marker');
    expect(swapped.status).toBe(400);
  }, 60_000);

  test('a bound file is held the same way: read through its walked source, refused once it is a link', async () => {
    await inA('echo tenant-bytes > /t/file5');
    const created = await engine.call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['cat', '/x'], HostConfig: { Binds: [`${join(allowed, 't', 'file5')}:/x:ro`] } });
    expect(created.status).toBe(201);
    expect(await startListing(created.json.Id as string)).toMatchObject({ status: 204, out: expect.stringContaining('tenant-bytes') });
    writeFileSync(join(secret, 'readable'), 'host-marker\n', { mode: 0o644 });
    await inA(`rm /t/file5 && ln -s ${join(secret, 'readable')} /t/file5`);
    const again = await startListing(created.json.Id as string);
    expect(again.out).not.toContain('host-marker');
    expect(again).toMatchObject({ status: 400, message: expect.stringContaining('a symbolic link is now on its path') });
  }, 60_000);

  test('a link higher on the path (the bound directory\'s parent swapped) is refused as well', async () => {
    await inA('mkdir -p /t/up/sub3');
    const created = await engine.call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['ls', '/x'], HostConfig: { Binds: [`${join(allowed, 't', 'up', 'sub3')}:/x`] } });
    expect(created.status).toBe(201);
    // The parent becomes a link to a host folder that holds a `sub3` of its own, with the marker in it.
    mkdirSync(join(secret, 'up', 'sub3'), { recursive: true });
    writeFileSync(join(secret, 'up', 'sub3', 'host-marker'), 'host only\n', { mode: 0o600 });
    await inA(`mv /t/up /t/up.old && ln -s ${join(secret, 'up')} /t/up`);
    const b = await startListing(created.json.Id as string);
    expect(b.out).not.toContain('host-marker');
    expect(b.status).toBe(400);
  }, 60_000);
});
