import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { dockerPyEngines, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// Issue 33: IPv6 on user-defined networks, as docker-py's suite (test_create_network_ipv6_enabled,
// test_create_with_ipv6_address, test_connect_with_ipv6_address) and docker-compose's
// (test_up_with_network_static_addresses) use it, and what a program on such a network sees. The
// fixture (fixtures/docker-py-ipv6.py) runs against dockerd on this machine, whose answers are the
// reference, and against the sandbox runtime, which must give the same ones. Where dockerd answers
// a bad request with a 500 (or takes an IP range outside its subnet), the sandbox answers a 400 in
// dockerd's words: those differences are stated per engine.
jest.setTimeout(180_000);

const root: PeerCheck = { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 };

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-ipv6.py', [image, `dg${process.pid % 100000}v6`], socket, 160_000) as Promise<Probe>;
}

/** A bridge network's IPv4 pool when the client gives none: one of dockerd's default pools (which one depends on the networks there). */
const autoPool = { Subnet: expect.stringMatching(/^(172\.\d+\.0\.0\/16|192\.168\.\d+\.0\/20)$/), Gateway: expect.stringMatching(/^(172|192)\.\d+\.\d+\.1$/) };
const autoAddress = { IPAddress: expect.stringMatching(/^(172|192)\.\d+\.\d+\.2$/), IPPrefixLen: expect.any(Number), Gateway: expect.stringMatching(/^(172|192)\.\d+\.\d+\.1$/) };
const NOT_IN_SUBNET = (ip: string): string => `Invalid address ${ip}: It does not belong to any of this network's subnets`;

for (const [label, peers, open] of dockerPyEngines(probe)) {
  const sandbox = label === 'the sandbox runtime';
  describeWithPeers(`docker-py 7 against ${label}: IPv6 on user-defined networks`, sandbox ? [...peers, root] : peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('EnableIPv6 with a v6 pool (subnet, range, gateway) is taken; inspect shows it after an IPv4 pool of the defaults (test_create_network_ipv6_enabled)', () => {
      expect(out.enabled).toEqual({ EnableIPv6: true, Config: [autoPool, { Subnet: '2001:389::/64', IPRange: '2001:389::0/96', Gateway: '2001:389::ffff' }] });
    });
    test('a container gets the range\'s first address and the v6 gateway; connected again with ipv6_address it has that one, in inspect and on its interface (test_connect_with_ipv6_address)', () => {
      expect(out.connect_v6).toEqual({
        first: { ...autoAddress, IPAMConfig: null, GlobalIPv6Address: '2001:389::1', GlobalIPv6PrefixLen: 64, IPv6Gateway: '2001:389::ffff' },
        connected: { ...autoAddress, IPAMConfig: { IPv6Address: '2001:389::f00d' }, GlobalIPv6Address: '2001:389::f00d', GlobalIPv6PrefixLen: 64, IPv6Gateway: '2001:389::ffff' },
        inside: '2001:389::f00d/64',
      });
    });
    test('a v6 pool without EnableIPv6 is kept; an ipv6_address there is echoed in IPAMConfig and the container gets no v6 address (test_create_with_ipv6_address)', () => {
      expect(out.v6_pool_only).toEqual({ EnableIPv6: false, Config: [{ Subnet: '2001:390::/64' }] });
      expect(out.create_v6_no_enable).toEqual({ IPAMConfig: { IPv6Address: '2001:390::f00d' }, GlobalIPv6Address: '', inside: '0' });
    });
    test('dual stack: pools given v6 first are shown IPv4 first; each container has both addresses, the fixed ones as asked, and its v6 one is an /etc/hosts line with its hostname', () => {
      expect(out.dual).toEqual({ EnableIPv6: true, Config: [{ Subnet: '10.91.6.0/24' }, { Subnet: 'fd00:db8:6::/64' }] });
      const v6 = { GlobalIPv6PrefixLen: 64, IPv6Gateway: 'fd00:db8:6::1', Gateway: '10.91.6.1', IPPrefixLen: 24 };
      expect(out.dual_a).toEqual({ ...v6, IPAMConfig: null, IPAddress: '10.91.6.2', GlobalIPv6Address: 'fd00:db8:6::2' });
      expect(out.dual_b).toEqual({ ...v6, IPAMConfig: { IPv4Address: '10.91.6.99', IPv6Address: 'fd00:db8:6::99' }, IPAddress: '10.91.6.99', GlobalIPv6Address: 'fd00:db8:6::99' });
      expect(out.dual_members).toEqual(['fd00:db8:6::2/64', 'fd00:db8:6::99/64']);
      expect(out.dual_inside).toBe('fd00:db8:6::99/64');
      expect(out.hosts_v6).toBe('1');
    });
    test('the network\'s DNS answers AAAA with a name\'s v6 address and A with its v4 one; containers ping each other over v6 by name, alias and address', () => {
      expect([out.aaaa, out.a]).toEqual(['fd00:db8:6::2', '10.91.6.2']);
      expect([out.ping6_name, out.ping6_alias, out.ping6_back]).toEqual(['ok', 'ok', 'ok']);
    });
    test('a v6 pool overlapping another network\'s is 403; EnableIPv6 without a v6 pool, an address that is no IPv6 one, one outside the subnet or on a network without a v6 subnet are refused in dockerd\'s words', () => {
      expect(out.overlap).toEqual(['APIError', 403, 'Pool overlaps with other one on this address space']);
      expect(out.no_pool).toEqual(['APIError', sandbox ? 400 : 404, 'could not find an available, non-overlapping IPv6 address pool among the defaults to assign to the network']);
      expect(out.bogus).toEqual(['APIError', 400, 'invalid IPv6 address: bogus']);
      expect(out.not_v6).toEqual(['APIError', 400, 'invalid IPv6 address: 10.91.6.7']);
      expect(out.outside).toEqual(['APIError', sandbox ? 400 : 500, NOT_IN_SUBNET('fd00:db8:9::5')]);
      expect(out.connect_outside).toEqual(['APIError', sandbox ? 400 : 500, NOT_IN_SUBNET('fd00:db8:5::5')]);
      expect(out.no_v6_subnet).toEqual(['APIError', 400, 'user specified IP address is supported only when connecting to networks with user configured subnets']);
      expect(out.connect_bogus).toEqual(sandbox ? ['APIError', 400, 'invalid IPv6 address: fd00::g'] : ['APIError', 500, 'Invalid IPv6 address: fd00::g)']);
    });
    test('the gateway\'s address, or one another container has, is refused at the start', () => {
      if (sandbox) {
        expect(out.gateway_address).toEqual(['APIError', 409, 'Address already in use: fd00:db8:6::1 on network <prefix>ds']);
        expect(out.address_in_use).toEqual(['APIError', 409, 'Address already in use: fd00:db8:6::99 on network <prefix>ds']);
      } else {
        expect([out.gateway_address, out.address_in_use]).toEqual([['APIError', 403, 'Address already in use'], ['APIError', 403, 'Address already in use']]);
      }
    });
    test(sandbox ? 'a v6 gateway outside the subnet is a 400 in dockerd\'s words, and so is a v6 IP range outside it' : 'dockerd answers a v6 gateway outside the subnet with a 500 and takes an IP range outside it', () => {
      expect(out.gateway_outside).toEqual(['APIError', sandbox ? 400 : 500, 'failed to allocate gateway (fd00:db8:8::1): Requested address is out of range']);
      expect(out.range_outside).toEqual(sandbox ? ['APIError', 400, 'ip-range fd00:db8:8::/96 is not within subnet fd00:db8:7::/64'] : ['ok']);
    });
    test('docker-compose\'s static addresses: the driver option com.docker.network.enable_ipv6 is kept (EnableIPv6 stays false, as on dockerd 20.10) and both fixed addresses are echoed (test_up_with_network_static_addresses)', () => {
      expect(out.static_net).toEqual({ EnableIPv6: false, Options: { 'com.docker.network.enable_ipv6': 'true' } });
      expect(out.static).toEqual({ IPAMConfig: { IPv4Address: '172.16.100.100', IPv6Address: 'fe80::1001:100' }, GlobalIPv6Address: '', IPv6Gateway: '' });
    });
  });
}
