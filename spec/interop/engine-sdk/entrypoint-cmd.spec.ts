import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-compose 1.29's `run --entrypoint X` (test_run_service_with_compose_file_entrypoint_overridden,
// …_dockerfile_entrypoint_overridden, …_unset_entrypoint) reads Config.Entrypoint and Config.Cmd back: the fixture's
// entrypoint_cmd section (fixtures/docker-py-client-gaps.py) against dockerd on this machine, whose
// answers are the reference, and against the sandbox runtime.
jest.setTimeout(180_000);

async function probe(socket: string, image: string): Promise<Probe> {
  const out = await runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}ec`, 'entrypoint_cmd'], socket, 160_000) as Record<string, Probe>;
  return out.entrypoint_cmd!;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  describeWithPeers(`docker-py 7 against ${label}: Config.Entrypoint and Config.Cmd of a container whose create sends an Entrypoint`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('an Entrypoint without a Cmd does not take the image\'s CMD: inspect shows Cmd null; with a Cmd, that Cmd; with an empty Cmd list, that list', () => {
      expect(out.entrypoint_only).toEqual([['echo'], null]);
      expect(out.entrypoint_and_cmd).toEqual([['echo'], ['x']]);
      expect(out.entrypoint_empty_cmd).toEqual([['echo'], []]);
    });
    test('with neither, the image\'s ENTRYPOINT and CMD', () => {
      expect(out.neither).toEqual([['printf'], ['sh']]);
    });
    test('an Entrypoint of [""] resets the image\'s: inspect shows Entrypoint null and the Cmd sent (compose\'s run --entrypoint "")', () => {
      expect(out.entrypoint_reset).toEqual([null, ['true']]);
    });
  });
}
