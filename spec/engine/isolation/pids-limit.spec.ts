import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call, start, run } = tenantSandbox('dockgate-pids');
const PIDS_MAX = 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || echo none';

d('a tenant cannot lift the pids limit (--pids-limit -1, docker update --pids-limit 0)', () => {
  test('a tenant\'s create with PidsLimit -1 is a 403 naming HostConfig.PidsLimit', async () => {
    const created = await call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', PIDS_MAX], HostConfig: { PidsLimit: -1 } });
    expect(created.status).toBe(403);
    expect(created.json.message).toContain('HostConfig.PidsLimit');
  });
  test('a tenant\'s container without PidsLimit (or with 0) gets the default', async () => {
    expect((await run('bob', { Cmd: ['sh', '-c', PIDS_MAX] })).out.trim()).toBe('2048');
    expect((await run('bob', { Cmd: ['sh', '-c', PIDS_MAX], HostConfig: { PidsLimit: 0 } })).out.trim()).toBe('2048');
  });
  test('a tenant\'s docker update to PidsLimit -1 or 0 is a 403; a number is applied', async () => {
    const id = await start('bob', { Cmd: ['sleep', '30'] });
    for (const PidsLimit of [-1, 0]) {
      const updated = await call('bob', 'POST', `/containers/${id}/update`, { PidsLimit });
      expect(updated.status).toBe(403);
      expect(updated.json.message).toContain('HostConfig.PidsLimit');
    }
    expect((await call('bob', 'POST', `/containers/${id}/update`, { PidsLimit: 100 })).status).toBe(200);
    await call('bob', 'DELETE', `/containers/${id}?force=1`);
  });
  test('the administrator may still ask for no limit (no pids group at all)', async () => {
    expect((await run('alice', { Cmd: ['sh', '-c', PIDS_MAX], HostConfig: { PidsLimit: -1 } })).out.trim()).toBe('none');
  });
});
