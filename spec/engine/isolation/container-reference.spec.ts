import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { call, start } = tenantSandbox('dockgate-iso-ref');

describeWithPeers('a container reference (--network container:REF) is resolved once, at create, to the id the policy checked', [bwrap], () => {
  test('create stores container:<full id>; a start after that container is gone is 404 naming it, never another tenant\'s container that now matches the prefix', async () => {
    // bob's own target, named by a one-character prefix of its id (unique at create).
    const target = await call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['sleep', '60'] });
    expect(target.status).toBe(201);
    const prefix = (target.json.Id as string).slice(0, 1);
    const joiner = await call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', 'nc -w 2 127.0.0.1 8080'], HostConfig: { NetworkMode: `container:${prefix}` } });
    expect(joiner.status).toBe(201);
    expect((await call('bob', 'GET', `/containers/${joiner.json.Id}/json`)).json.HostConfig.NetworkMode).toBe(`container:${target.json.Id}`);
    expect((await call('bob', 'DELETE', `/containers/${target.json.Id}?force=1`)).status).toBe(204);
    // carol's service on her loopback, in a container whose id now has bob's prefix.
    let carols: string | undefined;
    for (let i = 0; i < 200 && carols === undefined; i++) {
      const made = await call('carol', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', 'while true; do echo carol-secret | nc -l -p 8080; done'] });
      expect(made.status).toBe(201);
      if ((made.json.Id as string).startsWith(prefix)) carols = made.json.Id as string;
      else await call('carol', 'DELETE', `/containers/${made.json.Id}?force=1`);
    }
    expect(carols).toBeDefined();
    expect((await call('carol', 'POST', `/containers/${carols}/start`)).status).toBe(204);
    const started = await call('bob', 'POST', `/containers/${joiner.json.Id}/start`);
    expect({ status: started.status, body: started.json }).toEqual({ status: 404, body: { message: `No such container: ${target.json.Id}` } });
    await call('carol', 'DELETE', `/containers/${carols}?force=1`);
    await call('bob', 'DELETE', `/containers/${joiner.json.Id}?force=1`);
  });

  test('the reference still works while its container runs (by name), and a stopped one is dockerd\'s 409 naming its id', async () => {
    const id = await start('bob', { Cmd: ['sh', '-c', 'while true; do echo bob-own | nc -l -p 8080; done'] }, 'bob-web');
    const joined = await call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', 'sleep 1; nc -w 2 127.0.0.1 8080'], HostConfig: { NetworkMode: 'container:bob-web' } });
    expect(joined.status).toBe(201);
    expect((await call('bob', 'POST', `/containers/${joined.json.Id}/start`)).status).toBe(204);
    expect((await call('bob', 'POST', `/containers/${joined.json.Id}/wait`)).json.StatusCode).toBe(0);
    expect((await call('bob', 'POST', `/containers/${id}/kill`)).status).toBe(204);
    await call('bob', 'POST', `/containers/${id}/wait`);
    const again = await call('bob', 'POST', `/containers/${joined.json.Id}/start`);
    expect({ status: again.status, body: again.json }).toEqual({ status: 409, body: { message: `cannot join network of a non running container: ${id}` } });
    await call('bob', 'DELETE', `/containers/${joined.json.Id}?force=1`);
    await call('bob', 'DELETE', `/containers/${id}?force=1`);
  });
});
