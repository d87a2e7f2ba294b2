import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-py's test_build_with_dockerignore: the fixture (fixtures/docker-py-dockerignore.py)
// against dockerd on this machine, whose answers are the reference, and the sandbox runtime.
jest.setTimeout(180_000);

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-dockerignore.py', [image, `dg${process.pid % 100000}di`], socket, 160_000) as Promise<Probe>;
}

for (const [label, peers, open] of dockerPyEngines(probe)) {
  describeWithPeers(`docker-py 7 against ${label}: a .dockerignore that excludes a directory and re-includes files below it`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('ADD . copies the files a `!` line re-includes below an excluded directory, with their directories, and nothing else excluded', () => {
      expect(out.errors).toEqual([]);
      expect(out.found).toEqual([
        '/test', '/test/#file.txt', '/test/ignored', '/test/ignored/subdir', '/test/ignored/subdir/excepted-file',
        '/test/ignored/subdir/excepted-with-spaces', '/test/not-ignored',
      ]);
    });
  });
}
