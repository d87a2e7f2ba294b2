import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-py's LinkTest.test_remove_link (`docker rm --link`): the fixture's link_route section
// (fixtures/docker-py-client-gaps.py) against dockerd on this machine, whose answers are the
// reference, and against the sandbox runtime, which must give the same.
jest.setTimeout(180_000);

async function probe(socket: string, image: string): Promise<Probe> {
  const out = await runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}lr`, 'link_route'], socket, 160_000) as Record<string, Probe>;
  return out.link_route!;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  const sandbox = label === 'the sandbox runtime';
  describeWithPeers(`docker-py 7 against ${label}: DELETE /containers/{parent}/{alias}?link=true removes a legacy link`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('the link goes and both containers stay; HostConfig.Links is null once its last entry is gone', () => {
      expect(out.removed).toEqual(['ok']);
      expect(out.links_after).toBeNull();
      expect(out.still_there).toEqual(['/<prefix>lr-a', '/<prefix>lr-b']);
    });
    test('an alias the parent has no link of, a parent that does not exist, and a link removed already are 404s naming the link\'s path', () => {
      expect(out.no_such_alias).toEqual([404, 'No such container: <prefix>lr-b/nolink']);
      expect(out.no_such_parent).toEqual([404, 'No such container: <prefix>nosuch/mylink']);
      expect(out.again).toEqual([404, 'No such container: <prefix>lr-b/mylink']);
    });
    test(sandbox
      ? 'link=true on a container\'s own name is refused in dockerd\'s words, as a 409 (dockerd answers it with a 500), and removes nothing'
      : 'dockerd refuses link=true on a container\'s own name with a 500', () => {
      expect(out.own_name).toEqual([sandbox ? 409 : 500, 'Conflict, cannot remove the default link name of the container']);
    });
  });
}
