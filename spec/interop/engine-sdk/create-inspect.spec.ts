import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// Issue 33, create and inspect details of docker-py's suite (its logging and runtime tests): the
// fixture's create_inspect section (fixtures/docker-py-client-gaps.py) against dockerd on this
// machine, whose answers are the reference, and against the sandbox runtime, which gives the same.
jest.setTimeout(120_000);

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-client-gaps.py', [image, `dg${process.pid % 100000}ci`, 'create_inspect'], socket).then((o) => (o as { create_inspect: Probe }).create_inspect);
}
const engines = dockerPyEngines(probe);

for (const [label, peers, open] of engines) {
  describeWithPeers(`docker-py 7 against ${label}: inspect shows the create as asked`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('LogConfig.Config is what was asked ({} when nothing), not the server\'s default rotation', () => {
      expect(out).toMatchObject({
        log_not_given: { Type: 'json-file', Config: {} },
        log_type_only: { Type: 'json-file', Config: {} },
        log_max_file: { Type: 'json-file', Config: { 'max-file': '100' } },
        log_max_size: { Type: 'json-file', Config: { 'max-size': '1m' } },
        log_none: { Type: 'none', Config: {} },
      });
    });
    test('HostConfig.Runtime is the OCI runtime\'s name clients know (runc), the default one in /info; a create asking for runc is taken and one asking for a runtime the server lacks is refused by name', () => {
      expect(out).toMatchObject({
        runtime_default: 'runc', runtime_runc: ['ok'], runtime_runc_shown: 'runc', default_runtime: 'runc',
        runtime_unknown: ['APIError', 'Unknown runtime specified nosuch'],
      });
    });
  });
}
