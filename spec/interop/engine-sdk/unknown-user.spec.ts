import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-compose 1.29's `run --user sshd` (test_run_service_with_user_overridden…) reads back the
// one-off container of a run whose user the image lacks: the fixture's unknown_user section
// (fixtures/docker-py-client-gaps.py) against dockerd on this machine, whose answers are the
// reference, and against the sandbox runtime.
jest.setTimeout(180_000);

async function probe(socket: string, image: string): Promise<Probe> {
  const out = await runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}uu`, 'unknown_user'], socket, 160_000) as Record<string, Probe>;
  return out.unknown_user!;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  describeWithPeers(`docker-py 7 against ${label}: a User the image's /etc/passwd lacks is refused at the start, not at create`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('the create is taken; the start is refused in dockerd\'s words ("unable to find user sshd: no matching entries in passwd file")', () => {
      expect(out.create).toEqual(['ok']);
      expect(out.start).toEqual(['APIError', true]);
    });
    test('the container stays, created, with the User asked, exit code 128 and the refusal as its Error', () => {
      expect(out.after).toEqual(['sshd', 'created', 128, true]);
    });
  });
}
