import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-compose 1.29's `run --entrypoint X` (test_run_service_with_compose_file_entrypoint_overridden,
// …_dockerfile_entrypoint_overridden, …_unset_entrypoint) reads Config.Cmd back: the fixture's
// entrypoint_cmd section (fixtures/docker-py-client-gaps.py) against dockerd on this machine, whose
// answers are the reference, and against the sandbox runtime.
jest.setTimeout(180_000);

async function probe(socket: string, image: string): Promise<Probe> {
  const out = await runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}ec`, 'entrypoint_cmd'], socket, 160_000) as Record<string, Probe>;
  return out.entrypoint_cmd!;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  const sandbox = label === 'the sandbox runtime';
  describeWithPeers(`docker-py 7 against ${label}: Config.Cmd of a container whose create sends an Entrypoint`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('an Entrypoint without a Cmd does not take the image\'s CMD: inspect shows Cmd null; with a Cmd, that Cmd', () => {
      expect(out.entrypoint_only).toEqual([['echo'], null]);
      expect(out.entrypoint_and_cmd).toEqual([['echo'], ['x']]);
    });
    test('with neither, the image\'s CMD', () => {
      expect(out.neither).toEqual([null, ['sh']]);
    });
    test(sandbox ? 'an Entrypoint with an empty Cmd shows Cmd null (dockerd echoes the empty list)' : 'dockerd echoes an empty Cmd sent with an Entrypoint', () => {
      expect(out.entrypoint_empty_cmd).toEqual([['echo'], sandbox ? null : []]);
    });
  });
}
