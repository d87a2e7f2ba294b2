import { describe, expect, test } from '@jest/globals';
import { allow, type ContainerSpec, type EnginePolicy, type PolicyRequest } from '../../../lib/engine/index.js';
import { testRuntime } from '../helpers.js';
import { as, policyApp } from '../policy/support.js';

/** A policy that lets everything through and keeps what it was asked. */
function recording(): { policy: EnginePolicy; asked: PolicyRequest[] } {
  const asked: PolicyRequest[] = [];
  return { asked, policy: (request) => (asked.push(request), allow()) };
}

describe('a build\'s query is decoded once, before the policy checkpoint, as a create\'s body is', () => {
  test('the policy judges the RUN containers\' typed spec: the query\'s limits and network mode', async () => {
    const { policy, asked } = recording();
    const app = policyApp(testRuntime().runtime, policy);
    // The scripted runtime cannot build (501): the policy was asked first, with the decoded spec.
    const res = await as(app, 'bob').post('/v1.41/build?memory=67108864&cpushares=512&networkmode=none').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect(res.status).toBe(501);
    const spec = asked.find((r) => r.action === 'image.build')?.spec as ContainerSpec;
    expect({ memory: spec.host.memory, cpuShares: spec.host.cpuShares, networkMode: spec.host.networkMode }).toEqual({ memory: 67108864, cpuShares: 512, networkMode: 'none' });
  });

  test('a malformed query is dockerd\'s 400 naming the parameter before the policy is asked (even for a caller it would refuse)', async () => {
    const { asked } = recording();
    const refuseAll: EnginePolicy = (request) => (asked.push(request), { allow: false, message: 'refused' });
    const app = policyApp(testRuntime().runtime, refuseAll);
    const res = await as(app, undefined).post('/v1.41/build?memory=lots').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { message: 'memory: lots is not an integer' } });
    expect(asked).toEqual([]);
  });
});
