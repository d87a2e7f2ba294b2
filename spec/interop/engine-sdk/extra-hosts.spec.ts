import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-py's test_build_with_extra_hosts, and `docker run --add-host` or compose's extra_hosts:
// the fixture (fixtures/docker-py-extra-hosts.py) against dockerd on this machine, whose answers
// are the reference, and against the sandbox runtime, which must give the same.
jest.setTimeout(180_000);

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-extra-hosts.py', [image, `dg${process.pid % 100000}eh`], socket, 160_000) as Promise<Probe>;
}
const engines = dockerPyEngines(probe);

for (const [label, peers, open] of engines) {
  describeWithPeers(`docker-py 7 against ${label}: HostConfig.ExtraHosts adds its entries to /etc/hosts`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('each NAME:IP entry is a line "IP<tab>NAME" of the container\'s /etc/hosts, in order, IPv6 addresses too, on its network and with --network none', () => {
      expect(out.run).toEqual(['127.0.0.1\textrahost.local.test', '10.1.2.3\thello.world.test', '2001:db8::1\tsix.test']);
      expect(out.run_none).toEqual(['10.9.9.9\tnone.test']);
    });
    test('an entry without an IP, or with one that is not an address, is a 400 in dockerd\'s words', () => {
      expect(out.bad_ip).toEqual(['APIError', 400, 'invalid IP address in add-host: "not-an-ip"']);
      expect(out.no_ip).toEqual(['APIError', 400, 'bad format for add-host: "x.test"']);
    });
    test('a build\'s extra_hosts, every repeated extrahosts parameter, reach its RUN steps\' /etc/hosts (docker-py\'s test_build_with_extra_hosts)', () => {
      expect(out.build_errors).toEqual([]);
      expect(out.build).toEqual(['127.0.0.1\textrahost.local.test', '127.0.0.1\thello.world.test']);
    });
  });
}
