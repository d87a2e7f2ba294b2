import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-compose 1.29's test_up_with_network_mode and test_up read a running container's networks
// back: the fixture's network_views section (fixtures/docker-py-client-gaps.py) against dockerd on
// this machine, whose answers are the reference, and against the sandbox runtime.
jest.setTimeout(180_000);

async function probe(socket: string, image: string): Promise<Probe> {
  const out = await runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}nv`, 'network_views'], socket, 160_000) as Record<string, Probe>;
  return out.network_views!;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  describeWithPeers(`docker-py 7 against ${label}: a running container's NetworkSettings.Networks`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('on host and on none it lists that network, with a network and endpoint id and no address, in inspect and in the list', () => {
      expect(out.host).toEqual([['host'], { host: [true, true, '', ''] }, ['host']]);
      expect(out.none).toEqual([['none'], { none: [true, true, '', ''] }, ['none']]);
    });
    test('on a user network its short id is an alias once, even when the connect gave it among the aliases', () => {
      expect(out.aliases).toEqual(['<short id>', 'svc']);
    });
  });
}
