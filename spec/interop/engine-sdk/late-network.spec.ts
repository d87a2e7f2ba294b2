import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-compose 1.29's test_images_tagless_image creates a service's container before anything
// made its network: the fixture's late_network section (fixtures/docker-py-client-gaps.py)
// against dockerd on this machine, whose answers are the reference, and the sandbox runtime.
jest.setTimeout(180_000);

async function probe(socket: string, image: string): Promise<Probe> {
  const out = await runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}ln`, 'late_network'], socket, 160_000) as Record<string, Probe>;
  return out.late_network!;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  describeWithPeers(`docker-py 7 against ${label}: a container created on a user network that does not exist yet`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('the create is taken, and inspect shows the network as asked, with no id or address', () => {
      expect(out.created).toEqual(['<prefix>late', { '<prefix>late': [['foo'], '', ''] }]);
    });
    test('its start is the 404 "network NAME not found", kept as the state\'s Error with exit code 128', () => {
      expect(out.start_without).toEqual(['APIError', 'network <prefix>late not found']);
      expect(out.state_after).toEqual(['created', 128, 'network <prefix>late not found']);
    });
    test('once the network is made, the container starts on it, its alias resolving', () => {
      expect(out.start_with).toEqual([0, 'resolved']);
    });
  });
}
