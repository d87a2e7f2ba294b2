import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox, contextOf } from './support.js';

const { call } = tenantSandbox('dockgate-iso-image-visibility');


/** An image of `user`'s own, committed from a busybox container: its full id. */
async function committed(user: string, repo?: string): Promise<string> {
  const created = await call(user, 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] });
  const commit = await call(user, 'POST', `/commit?container=${created.json.Id}${repo ? `&repo=${repo}&tag=1` : ''}`);
  expect(commit.status).toBe(201);
  await call(user, 'DELETE', `/containers/${created.json.Id}?force=1`);
  return commit.json.Id as string;
}

const tagsOf = (rows: { RepoTags?: string[] | null }[]) => rows.flatMap((r) => r.RepoTags ?? []);

describeWithPeers('an image is visible to a tenant when it carries a name of the tenant\'s namespace or a shared name, or one of its containers runs it', [bwrap], () => {
  test('carol\'s private image does not exist for bob: list, inspect, history, save, tag, create and FROM, by name or by id; carol and the administrator see it', async () => {
    const id = await committed('carol', 'carol/private');
    const short = id.replace(/^sha256:/, '').slice(0, 12);

    expect(tagsOf((await call('bob', 'GET', '/images/json')).json)).not.toContain('carol/private:1');
    expect(tagsOf((await call('bob', 'GET', '/images/json?all=1')).json)).not.toContain('carol/private:1');
    for (const ref of ['carol/private:1', id, short]) {
      for (const path of [`/images/${ref}/json`, `/images/${ref}/history`, `/images/${ref}/get`]) {
        const res = await call('bob', 'GET', path);
        expect({ path, status: res.status, body: res.json }).toEqual({ path, status: 404, body: { message: `No such image: ${ref}` } });
      }
      const save = await call('bob', 'GET', `/images/get?names=busybox&names=${encodeURIComponent(ref)}`);
      expect({ ref, status: save.status, body: save.json }).toEqual({ ref, status: 404, body: { message: `No such image: ${ref}` } });
      const tag = await call('bob', 'POST', `/images/${ref}/tag?repo=bob/stolen&tag=1`);
      expect({ ref, status: tag.status, body: tag.json }).toEqual({ ref, status: 404, body: { message: `No such image: ${ref}` } });
      const create = await call('bob', 'POST', '/containers/create', { Image: ref, Cmd: ['true'] });
      expect({ ref, status: create.status, body: create.json }).toEqual({ ref, status: 404, body: { message: `No such image: ${ref}` } });
      const build = await call('bob', 'POST', '/build', await contextOf(`FROM ${ref}\nRUN true\n`));
      expect({ ref, build: build.body.toString() }).toEqual({ ref, build: expect.stringContaining(`No such image: ${ref}`) });
    }
    const copyFrom = await call('bob', 'POST', '/build', await contextOf('FROM busybox\nCOPY --from=carol/private:1 /bin/true /x\n'));
    expect(copyFrom.body.toString()).toContain('No such image: carol/private:1');
    expect((await call('bob', 'GET', '/images/bob/stolen:1/json')).status).toBe(404);

    // The owner and the administrator see it as before.
    for (const user of ['carol', 'alice']) {
      expect(tagsOf((await call(user, 'GET', '/images/json')).json)).toContain('carol/private:1');
      expect((await call(user, 'GET', `/images/${short}/json`)).json.Id).toBe(id);
    }
  });

  test('bob still sees and runs the shared images (busybox), and his own', async () => {
    expect(tagsOf((await call('bob', 'GET', '/images/json')).json)).toContain('busybox:latest');
    expect((await call('bob', 'GET', '/images/busybox/json')).status).toBe(200);
    expect((await call('bob', 'GET', '/images/busybox/history')).status).toBe(200);
    const id = await committed('bob', 'bob/own');
    expect(tagsOf((await call('bob', 'GET', '/images/json')).json)).toContain('bob/own:1');
    expect((await call('bob', 'GET', `/images/${id}/json`)).status).toBe(200);
    expect(tagsOf((await call('carol', 'GET', '/images/json')).json)).not.toContain('bob/own:1');
  });

  test('a tenant\'s untagged commit is its own (the commit keeps the container\'s owner label): inspect and create by id work for it, not for another tenant', async () => {
    const id = await committed('bob');
    expect((await call('bob', 'GET', `/images/${id}/json`)).status).toBe(200);
    const create = await call('bob', 'POST', '/containers/create', { Image: id, Cmd: ['true'] });
    expect(create.status).toBe(201);
    await call('bob', 'DELETE', `/containers/${create.json.Id}?force=1`);
    expect((await call('carol', 'GET', `/images/${id}/json`)).json).toEqual({ message: `No such image: ${id}` });
    expect((await call('carol', 'POST', '/containers/create', { Image: id, Cmd: ['true'] })).status).toBe(404);
  });

  test('an image left without a name stays visible to the owner of a container that runs it, and to nobody else', async () => {
    const id = await committed('bob', 'bob/dangling');
    const created = await call('bob', 'POST', '/containers/create', { Image: 'bob/dangling:1', Cmd: ['sleep', '30'] });
    expect((await call('bob', 'POST', `/containers/${created.json.Id}/start`)).status).toBe(204);
    expect((await call('bob', 'DELETE', '/images/bob/dangling:1?force=1')).status).toBe(200);

    expect((await call('bob', 'GET', `/images/${id}/json`)).json.RepoTags).toEqual([]);
    expect((await call('bob', 'GET', '/images/json?all=1')).json.map((r: { Id: string }) => r.Id)).toContain(id);
    expect((await call('carol', 'GET', `/images/${id}/json`)).status).toBe(404);
    expect((await call('carol', 'GET', '/images/json?all=1')).json.map((r: { Id: string }) => r.Id)).not.toContain(id);

    await call('bob', 'DELETE', `/containers/${created.json.Id}?force=1`);
  });
});
