import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call, start } = tenantSandbox('dockgate-bad-input');

// Each of these was accepted at create and then answered 500 at start (a NUL reached bwrap's
// argv: "The argument 'args[122]' must be a string without null bytes"), or 500 at once
// (ENAMETOOLONG for the volume's directory).
d('a tenant\'s bad input is a 4xx naming the field, never a 500', () => {
  test('a NUL byte in Hostname is a 400 naming Hostname', async () => {
    const answer = await call('bob', 'POST', '/containers/create', { Image: 'busybox', Hostname: 'a\u0000b' });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('Hostname');
  });
  test('a NUL byte in WorkingDir is a 400 naming WorkingDir', async () => {
    const answer = await call('bob', 'POST', '/containers/create', { Image: 'busybox', WorkingDir: '/tmp/a\u0000b' });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('WorkingDir');
  });
  test('a NUL byte in a tmpfs path is a 400 naming HostConfig.Tmpfs', async () => {
    const answer = await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Tmpfs: { '/a\u0000b': '' } } });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('HostConfig.Tmpfs');
  });
  test('a NUL byte in a tmpfs mount\'s target is a 400 naming HostConfig.Mounts', async () => {
    const answer = await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Mounts: [{ Type: 'tmpfs', Target: '/a\u0000b' }] } });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('HostConfig.Mounts');
  });
  test('a NUL byte in an exec\'s Cmd is a 400 naming Cmd', async () => {
    const id = await start('bob', { Cmd: ['sleep', '30'] });
    const answer = await call('bob', 'POST', `/containers/${id}/exec`, { Cmd: ['echo', 'a\u0000b'] });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('Cmd');
    await call('bob', 'DELETE', `/containers/${id}?force=1`);
  });
  test('a NUL byte in an exec\'s Env or WorkingDir is a 400 naming the field', async () => {
    const id = await start('bob', { Cmd: ['sleep', '30'] });
    const env = await call('bob', 'POST', `/containers/${id}/exec`, { Cmd: ['true'], Env: ['A=a\u0000b'] });
    expect(env.status).toBe(400);
    expect(env.json.message).toContain('Env');
    const dir = await call('bob', 'POST', `/containers/${id}/exec`, { Cmd: ['true'], WorkingDir: '/a\u0000b' });
    expect(dir.status).toBe(400);
    expect(dir.json.message).toContain('WorkingDir');
    await call('bob', 'DELETE', `/containers/${id}?force=1`);
  });
  test('an over-long volume name is a 400 naming the name', async () => {
    const name = `v${'x'.repeat(300)}`;
    const answer = await call('bob', 'POST', '/volumes/create', { Name: name });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('volume name');
    // A create that names the volume makes it on the way (as dockerd does): the same 400.
    const mounted = await call('alice', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Binds: [`${name}:/data`] } });
    expect(mounted.status).toBe(400);
    expect(mounted.json.message).toContain('volume name is too long');
  });
});
