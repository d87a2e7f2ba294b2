import { describe, test, expect } from '@jest/globals';
import { EngineError } from '../../../lib/engine-api/engine-error.js';
import { containerSpecOf } from '../../../lib/engine-api/container-spec.js';
import { exposedPortKeys, portRequests } from '../../../lib/engine/runtime/sandbox/network/port-bindings.js';

const body = (extra: Record<string, unknown>, host: Record<string, unknown> = {}) => containerSpecOf({ Image: 'busybox', ...extra, HostConfig: host });

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(EngineError);
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('port publishing reads PortBindings as dockerd does (nat.ParsePortSpec keys, one entry per binding)', () => {
  test('-p 8080:80, -p 127.0.0.1:9090:90/udp and -p 70 give a fixed, an addressed and an ephemeral request', () => {
    const requests = portRequests(body({}, { PortBindings: {
      '80/tcp': [{ HostIp: '', HostPort: '8080' }, { HostIp: '', HostPort: '8081' }],
      '90/udp': [{ HostIp: '127.0.0.1', HostPort: '9090' }],
      '70': [{ HostIp: '', HostPort: '' }],
    } }));
    // (An integer-like key, '70', comes first in a JavaScript object.)
    expect(requests).toEqual([
      { key: '70/tcp', port: 70, proto: 'tcp', hostIp: '', hostPort: 0 },
      { key: '80/tcp', port: 80, proto: 'tcp', hostIp: '', hostPort: 8080 },
      { key: '80/tcp', port: 80, proto: 'tcp', hostIp: '', hostPort: 8081 },
      { key: '90/udp', port: 90, proto: 'udp', hostIp: '127.0.0.1', hostPort: 9090 },
    ]);
  });
  test('-P publishes every exposed port without a binding on an ephemeral port; without -P exposure publishes nothing', () => {
    const exposed = { ExposedPorts: { '80/tcp': {}, '443/tcp': {}, '53/udp': {} } };
    expect(portRequests(body(exposed))).toEqual([]);
    expect(portRequests(body(exposed, { PublishAllPorts: true, PortBindings: { '80/tcp': [{ HostPort: '8080' }] } }))).toEqual([
      { key: '80/tcp', port: 80, proto: 'tcp', hostIp: '', hostPort: 8080 },
      { key: '443/tcp', port: 443, proto: 'tcp', hostIp: '', hostPort: 0 },
      { key: '53/udp', port: 53, proto: 'udp', hostIp: '', hostPort: 0 },
    ]);
  });
  test('the exposed keys are ExposedPorts and PortBindings together, a bare port meaning tcp', () => {
    expect(exposedPortKeys(body({ ExposedPorts: { '443': {} } }, { PortBindings: { '80/tcp': null } })).sort()).toEqual(['443/tcp', '80/tcp']);
  });
});

describe('what the user-mode stack cannot forward is refused, naming it', () => {
  test('sctp, an IPv6 host address, a host port range, a bad port', () => {
    expect(refusal(() => portRequests(body({}, { PortBindings: { '80/sctp': [{ HostPort: '1' }] } })))).toContain('HostConfig.PortBindings "80/sctp": publishing sctp ports is not supported');
    expect(refusal(() => portRequests(body({ ExposedPorts: { '9/sctp': {} } }, { PublishAllPorts: true })))).toContain('sctp');
    expect(refusal(() => portRequests(body({}, { PortBindings: { '80/tcp': [{ HostIp: '::', HostPort: '1' }] } })))).toContain('HostIp "::" is not supported');
    expect(refusal(() => portRequests(body({}, { PortBindings: { '80/tcp': [{ HostPort: '8000-8010' }] } })))).toContain('a host port range ("8000-8010") is not supported');
    expect(refusal(() => portRequests(body({}, { PortBindings: { '70000/tcp': [{ HostPort: '1' }] } })))).toContain('invalid port specification: "70000/tcp"');
    expect(refusal(() => portRequests(body({}, { PortBindings: { '80/tcp': [{ HostPort: 'x' }] } })))).toContain('invalid host port "x"');
    expect(refusal(() => exposedPortKeys(body({ ExposedPorts: ['80'] })))).toContain('ExposedPorts must be an object');
  });
});
