import { test, expect } from '@jest/globals';
import { join } from 'node:path';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap, sandboxOnSocket } from '../sandbox-socket.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { stateDir, call, run } = sandboxOnSocket('dockgate-volumes');

d('sandbox named volumes (local driver): create, list, inspect, remove in dockerd\'s shapes and words', () => {
  test('create answers 201 with the volume; list and inspect show it; a second create of the name answers it as it is', async () => {
    const created = await call('POST', '/volumes/create', { Name: 'dg-vol-a', Labels: { team: 'x' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ Name: 'dg-vol-a', Driver: 'local', Scope: 'local', Labels: { team: 'x' }, Mountpoint: join(stateDir, 'volumes', 'dg-vol-a', '_data') });
    expect((await call('POST', '/volumes/create', { Name: 'dg-vol-a' })).json.CreatedAt).toBe(created.json.CreatedAt);
    const list = await call('GET', `/volumes?filters=${encodeURIComponent(JSON.stringify({ label: ['team=x'] }))}`);
    expect(list.json.Volumes.map((v: { Name: string }) => v.Name)).toEqual(['dg-vol-a']);
    expect((await call('GET', '/volumes/dg-vol-a')).json.Name).toBe('dg-vol-a');
  });
  test('a bad or short name, an unknown driver and driver options are refused in dockerd\'s words (400, 404, 400)', async () => {
    const bad = await call('POST', '/volumes/create', { Name: 'no/slash' });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('includes invalid characters for a local volume name');
    expect((await call('POST', '/volumes/create', { Name: 'v' })).json).toEqual({ message: 'create v: volume name is too short, names should be at least two alphanumeric characters' });
    expect((await call('POST', '/volumes/create', { Name: 'vv', Driver: 'bogus' })).json).toEqual({ message: 'create vv: error looking up volume plugin bogus: plugin "bogus" not found' });
    const opts = await call('POST', '/volumes/create', { Name: 'vv', DriverOpts: { type: 'none', device: '/', o: 'bind' } });
    expect(opts.status).toBe(400);
    expect(opts.json.message).toContain('create vv: DriverOpts');
  });
  test('two containers share a volume: -v name:/path writes, a Mounts volume reads; inspect lists both kinds of mount', async () => {
    const writer = await run({ Cmd: ['sh', '-c', 'echo shared > /data/f'], HostConfig: { Binds: ['dg-vol-b:/data'] } });
    expect(writer.code).toBe(0);
    const reader = await run({ Cmd: ['cat', '/in/f'], HostConfig: { Mounts: [{ Type: 'volume', Source: 'dg-vol-b', Target: '/in', ReadOnly: true }], Binds: [`${stateDir}:/host:ro`] } });
    expect(reader.out).toBe('shared\n');
    const mountpoint = join(stateDir, 'volumes', 'dg-vol-b', '_data');
    expect((await call('GET', `/containers/${writer.id}/json`)).json.Mounts).toEqual([
      { Type: 'volume', Name: 'dg-vol-b', Source: mountpoint, Destination: '/data', Driver: 'local', Mode: 'z', RW: true, Propagation: '' },
    ]);
    const mounts = (await call('GET', `/containers/${reader.id}/json`)).json.Mounts;
    expect(mounts).toEqual([
      { Type: 'bind', Source: stateDir, Destination: '/host', Mode: 'ro', RW: false, Propagation: 'rprivate' },
      { Type: 'volume', Name: 'dg-vol-b', Source: mountpoint, Destination: '/in', Driver: 'local', Mode: '', RW: false, Propagation: '' },
    ]);
    // Made on the way by the create that named it, as dockerd makes it.
    expect((await call('GET', '/volumes/dg-vol-b')).status).toBe(200);
    const inUse = await call('DELETE', '/volumes/dg-vol-b');
    expect(inUse.status).toBe(409);
    expect(inUse.json.message).toMatch(/^remove dg-vol-b: volume is in use - \[[0-9a-f]{64}, [0-9a-f]{64}\]$/);
    for (const id of [writer.id, reader.id]) expect((await call('DELETE', `/containers/${id}`)).status).toBe(204);
    expect((await call('DELETE', '/volumes/dg-vol-b')).status).toBe(204);
    expect((await call('GET', '/volumes/dg-vol-b')).json).toEqual({ message: 'get dg-vol-b: no such volume' });
    expect((await call('DELETE', '/volumes/dg-vol-b?force=1')).status).toBe(204);
  });
  test('prune removes unused volumes and names them', async () => {
    await call('POST', '/volumes/create', { Name: 'dg-vol-unused' });
    const report = await call('POST', '/volumes/prune');
    expect(report.json.VolumesDeleted).toEqual(expect.arrayContaining(['dg-vol-a', 'dg-vol-unused']));
    expect((await call('GET', '/volumes')).json.Volumes).toEqual([]);
  });
});
