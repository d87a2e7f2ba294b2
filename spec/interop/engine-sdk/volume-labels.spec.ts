import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-py's test_create_with_volume_mount (docker.types.Mount(labels=…)): the fixture
// (fixtures/docker-py-volume-labels.py) against dockerd on this machine, whose answers are the
// reference, and against the sandbox runtime, which must give the same.
jest.setTimeout(180_000);

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-volume-labels.py', [image, `dg${process.pid % 100000}vl`], socket, 160_000) as Promise<Probe>;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  const sandbox = label === 'the sandbox runtime';
  describeWithPeers(`docker-py 7 against ${label}: a volume mount's VolumeOptions.Labels label the volume it makes`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('the create is taken and inspect shows each volume mount by its name, read-write', () => {
      expect(out.shown).toEqual({ '/m1': ['volume', true, true], '/m2': ['volume', true, true], '/m3': ['volume', 64, true] });
    });
    test('a named volume the mount makes and an anonymous one carry the labels; an existing volume keeps its own', () => {
      expect(out.labels).toEqual({ '/m1': { kept: 'yes' }, '/m2': { given: 'new' }, '/m3': { given: 'anon' } });
    });
    test(sandbox
      ? 'labels that are not strings are a 400 (dockerd answers its JSON decoding error with a 500); on a bind mount a 400 in dockerd\'s words'
      : 'dockerd answers labels that are not strings with a 500, and VolumeOptions on a bind mount with a 400', () => {
      expect(out.not_strings).toBe(sandbox ? 400 : 500);
      expect(out.on_a_bind).toEqual([400, 'invalid mount config for type "bind": field VolumeOptions must not be specified']);
    });
  });
}
