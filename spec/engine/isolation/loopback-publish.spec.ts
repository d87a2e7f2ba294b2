import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';
import { tenancyPolicy } from '../../../lib/engine/index.js';

const sandbox = tenantSandbox('dockgate-iso-loopback');
const allowing = tenantSandbox('dockgate-iso-loopback-ok', { policy: { allowLoopbackPublish: true } });

const publishing = (hostIp: string) => ({ Image: 'busybox', Cmd: ['true'], ExposedPorts: { '80/tcp': {} }, HostConfig: { PortBindings: { '80/tcp': [{ HostIp: hostIp, HostPort: '18080' }] } } });

describeWithPeers('a tenant may not publish a port on the host\'s loopback (where it would squat or answer for a local service)', [bwrap], () => {
  test('HostIp 127.0.0.0/8, ::1 or localhost is a 403 naming HostConfig.PortBindings for a tenant; the administrator may', async () => {
    for (const hostIp of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', 'localhost']) {
      const refused = await sandbox.call('bob', 'POST', '/containers/create', publishing(hostIp));
      expect(refused.status).toBe(403);
      expect(refused.json.message).toMatch(/^HostConfig\.PortBindings: /);
      expect(refused.json.message).toContain(hostIp);
    }
    const admin = await sandbox.call('alice', 'POST', '/containers/create', publishing('127.0.0.1'));
    expect(admin.status).toBe(201);
    await sandbox.call('alice', 'DELETE', `/containers/${admin.json.Id}`);
  });

  test('another address, or none, stays allowed; allowLoopbackPublish lets tenants publish on loopback', async () => {
    const any = await sandbox.call('bob', 'POST', '/containers/create', publishing(''));
    expect(any.status).toBe(201);
    await sandbox.call('bob', 'DELETE', `/containers/${any.json.Id}`);
    const allowed = await allowing.call('bob', 'POST', '/containers/create', publishing('127.0.0.1'));
    expect(allowed.status).toBe(201);
    await allowing.call('bob', 'DELETE', `/containers/${allowed.json.Id}`);
  });

  test('allowLoopbackPublish must be a boolean', () => {
    expect(() => tenancyPolicy({ allowLoopbackPublish: 'yes' as unknown as boolean })).toThrow('tenantPolicy option "allowLoopbackPublish" must be a boolean');
  });
});
