import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-py's test_build_stderr_data and compose's test_build_failed / test_build_failed_forcerm:
// the fixture (fixtures/docker-py-build-stream.py) against dockerd on this machine, whose answers
// are the reference, and against the sandbox runtime, which must give the same.
jest.setTimeout(180_000);

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-build-stream.py', [image, `dg${process.pid % 100000}bs`], socket, 160_000) as Promise<Probe>;
}
const engines = dockerPyEngines(probe);
const step = (text: string) => [{ stream: text }, { stream: '\n' }];

for (const [label, peers, open] of engines) {
  describeWithPeers(`docker-py 7 against ${label}: a RUN step's stderr and a failed RUN's container, as dockerd's classic builder gives them`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('what a RUN step writes to stderr is a stream message between the ANSI codes for bright red and reset', () => {
      expect(out.stderr_ok).toEqual([
        ...step('Step 1/2 : FROM BASE'), { stream: ' ---> ID\n' },
        ...step('Step 2/2 : RUN sh -c ">&2 echo \'to stderr\'"'), { stream: ' ---> Running in ID\n' },
        { stream: '\x1b[91mto stderr\n\x1b[0m' },
        { stream: 'Removing intermediate container ID\n' }, { stream: ' ---> ID\n' },
        { aux: { ID: 'DIGEST' } }, { stream: 'Successfully built ID\n' },
      ]);
    });
    test('a failing RUN\'s stderr comes before the errorDetail naming the command and its exit code', () => {
      const message = 'The command \'/bin/sh -c sh -c "sleep 1; >&2 echo e3; exit 3" PREFIX\' returned a non-zero code: 3';
      expect(out.failing).toEqual([
        ...step('Step 1/2 : FROM BASE'), { stream: ' ---> ID\n' },
        ...step('Step 2/2 : RUN sh -c "sleep 1; >&2 echo e3; exit 3" PREFIX'), { stream: ' ---> Running in ID\n' },
        { stream: '\x1b[91me3\n\x1b[0m' },
        { errorDetail: { code: 3, message }, error: message },
      ]);
    });
    test('the failed step\'s container is left, exited with the step\'s code (rm=1 removes only the steps that succeeded); forcerm removes it', () => {
      expect(out.left).toEqual([[3, 'Exited']]);
      expect(out.left_forcerm).toEqual([]);
    });
  });
}
