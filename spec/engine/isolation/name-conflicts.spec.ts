import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { call } = tenantSandbox('dockgate-iso-names');

const inUse = (name: string, id: string) =>
  `Conflict. The container name "/${name}" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`;

describeWithPeers('a name conflict with another owner\'s container says the name is in use without identifying that container', [bwrap], () => {
  test('create and rename: a tenant is told the name is taken, with no id; the owner and the administrator get dockerd\'s message', async () => {
    const carols = await call('carol', 'POST', '/containers/create?name=shared-name', { Image: 'busybox', Cmd: ['true'] });
    expect(carols.status).toBe(201);
    const id = carols.json.Id as string;

    const create = await call('bob', 'POST', '/containers/create?name=shared-name', { Image: 'busybox', Cmd: ['true'] });
    expect({ status: create.status, body: create.json }).toEqual({ status: 409, body: { message: 'Conflict. The container name "/shared-name" is already in use.' } });
    expect(create.body.toString()).not.toContain(id.slice(0, 4));

    const bobs = await call('bob', 'POST', '/containers/create?name=bob-own', { Image: 'busybox', Cmd: ['true'] });
    expect(bobs.status).toBe(201);
    const rename = await call('bob', 'POST', `/containers/${bobs.json.Id}/rename?name=shared-name`);
    expect({ status: rename.status, body: rename.json }).toEqual({ status: 409, body: { message: 'Error when allocating new name: Conflict. The container name "/shared-name" is already in use.' } });

    // The owner's own conflict, and the administrator's, name the container as dockerd does.
    expect((await call('carol', 'POST', '/containers/create?name=shared-name', { Image: 'busybox', Cmd: ['true'] })).json).toEqual({ message: inUse('shared-name', id) });
    expect((await call('alice', 'POST', '/containers/create?name=shared-name', { Image: 'busybox', Cmd: ['true'] })).json).toEqual({ message: inUse('shared-name', id) });
    expect((await call('bob', 'POST', '/containers/create?name=bob-own', { Image: 'busybox', Cmd: ['true'] })).json).toEqual({ message: inUse('bob-own', bobs.json.Id) });

    await call('carol', 'DELETE', `/containers/${id}?force=1`);
    await call('bob', 'DELETE', `/containers/${bobs.json.Id}?force=1`);
  });
});
