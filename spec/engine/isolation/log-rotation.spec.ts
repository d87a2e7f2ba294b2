import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call } = tenantSandbox('dockgate-log-rotation');
const create = (Config: Record<string, string>) => call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { LogConfig: { Type: 'json-file', Config } } });

d('a container\'s log files are capped (max-size × max-file ≤ maxLogFilesBytes, 1 GiB by default)', () => {
  test('max-size=1p with max-file=999999 is a 400 naming HostConfig.LogConfig', async () => {
    const created = await create({ 'max-size': '1p', 'max-file': '999999' });
    expect(created.status).toBe(400);
    expect(created.json.message).toContain('HostConfig.LogConfig');
    expect(created.json.message).toContain('maxLogFilesBytes');
  });
  test('either one alone is enough to cross the cap: max-size=2g, or max-file=200 of the default 10m', async () => {
    expect((await create({ 'max-size': '2g', 'max-file': '1' })).status).toBe(400);
    expect((await create({ 'max-file': '200' })).status).toBe(400);
    expect((await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { LogConfig: { Type: 'local', Config: { 'max-size': '1t' } } } })).status).toBe(400);
  });
  test('a rotation within the cap is kept as asked', async () => {
    const created = await create({ 'max-size': '100m', 'max-file': '10' });
    expect(created.status).toBe(201);
    expect((await call('bob', 'GET', `/containers/${created.json.Id}/json`)).json.HostConfig.LogConfig).toEqual({ Type: 'json-file', Config: { 'max-size': '100m', 'max-file': '10' } });
  });
});
