import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { ipGroupsIn } from '../../../lib/engine/runtime/sandbox/network/netns-ip.js';
import { describeWithPeers, program } from '../../support/peers.js';

const TOOLS = { nsenter: 'nsenter', ip: 'ip' };

describeWithPeers('callers\' ip commands for one network namespace share one process, and each gets its own lines\' error', [program('unshare'), program('ip', ['-V'])], () => {
  let holder: ChildProcess;
  beforeAll(async () => {
    holder = spawn('unshare', ['--net', '--', 'sleep', '600'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 200));
  });
  afterAll(() => {
    holder.kill('SIGKILL');
  });

  test('a failed line fails its own group only: the groups after it still run, with ip\'s words in the failed ones', async () => {
    const errors = await ipGroupsIn(TOOLS, holder.pid!, [
      ['link set lo up'],
      ['link add dg0 type bogus', 'link set lo up'],
      ['link add dg1 type veth peer name dg2', 'link set dg1 up'],
      ['link del nothere'],
    ]);
    expect(errors[0]).toBeUndefined();
    expect(errors[1]?.message).toMatch(/Unknown device type/);
    expect(errors[2]).toBeUndefined();
    expect(errors[3]?.message).toMatch(/Cannot find device "nothere"/);
    expect(await ipGroupsIn(TOOLS, holder.pid!, [['link del dg1']])).toEqual([undefined]);
  });

  test('a namespace that cannot be entered fails every group', async () => {
    const errors = await ipGroupsIn(TOOLS, 999_999_999, [['link set lo up'], ['link set lo up']]);
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e instanceof Error)).toBe(true);
  });
});
