import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { run } = tenantSandbox('dockgate-iso-netraw');

/** CAP_NET_RAW is bit 13 of a capability mask. */
const NET_RAW_BIT = 1n << 13n;
const capEff = (out: string): bigint => BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(out)?.[1] ?? 'x'}`);

describeWithPeers('a tenant\'s container goes without NET_RAW unless it asks for it (no raw sockets to forge packets with)', [bwrap], () => {
  test('a tenant\'s CapEff lacks bit 13 and a raw-socket ping fails; the administrator keeps Docker\'s default set', async () => {
    const bob = await run('bob', { Cmd: ['sh', '-c', 'grep CapEff /proc/self/status; ping -c1 -W1 127.0.0.1 >/dev/null 2>&1 && echo ping-ok || echo ping-refused'] });
    expect(capEff(bob.out) & NET_RAW_BIT).toBe(0n);
    expect(bob.out).toContain('ping-refused');
    const alice = await run('alice', { Cmd: ['grep', 'CapEff', '/proc/self/status'] });
    expect(capEff(alice.out) & NET_RAW_BIT).toBe(NET_RAW_BIT);
  });

  test('a tenant who adds NET_RAW explicitly (CapAdd) gets it, on its own networks only', async () => {
    const bob = await run('bob', { Cmd: ['grep', 'CapEff', '/proc/self/status'], HostConfig: { CapAdd: ['CAP_NET_RAW'] } });
    expect(capEff(bob.out) & NET_RAW_BIT).toBe(NET_RAW_BIT);
  });
});
