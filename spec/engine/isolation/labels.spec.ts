import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call } = tenantSandbox('dockgate-labels');

d('labels on a tenant\'s volumes and networks are strings, checked as containers\' are', () => {
  test('a volume with a label value that is not a string is a 400 naming Labels; the administrator\'s volume list and system df still answer', async () => {
    const created = await call('bob', 'POST', '/volumes/create', { Name: 'bob-labels', Labels: { team: 1, nested: { a: 'b' } } });
    expect(created.status).toBe(400);
    expect(created.json.message).toContain('VolumeCreateBody.Labels');
    expect((await call('bob', 'POST', '/volumes/create', { Name: 'bob-labels-list', Labels: ['a'] })).status).toBe(400);
    expect((await call('alice', 'GET', '/volumes')).status).toBe(200);
    expect((await call('alice', 'GET', '/system/df')).status).toBe(200);
  });
  test('a network with a label value that is not a string is a 400 naming Labels; the administrator\'s network list still answers', async () => {
    const created = await call('bob', 'POST', '/networks/create', { Name: 'bob-labels', Labels: { team: null } });
    expect(created.status).toBe(400);
    expect(created.json.message).toContain('NetworkCreateRequest.Labels');
    expect((await call('alice', 'GET', '/networks')).status).toBe(200);
    expect((await call('alice', 'GET', '/system/df')).status).toBe(200);
  });
  test('string labels are kept as they are', async () => {
    const created = await call('bob', 'POST', '/volumes/create', { Name: 'bob-labels-ok', Labels: { team: 'x' } });
    expect(created.status).toBe(201);
    expect(created.json.Labels).toMatchObject({ team: 'x' });
  });
});
