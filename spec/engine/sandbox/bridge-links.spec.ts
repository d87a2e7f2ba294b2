import { describe, expect, test } from '@jest/globals';
import { linkEnvironment, linkHostsLine, withLinkEnvironment, type BridgeLinkTarget } from '../../../lib/engine/runtime/sandbox/network/bridge-links.js';

// The variables and /etc/hosts line of a legacy link on the default bridge, in the forms of moby's
// daemon/links (links.go ToEnv) and container_operations.go (the hosts entry). The end-to-end check
// against a running pair is spec/interop/engine-sdk/binds-groups.spec.ts.
const target = (over: Partial<BridgeLinkTarget> = {}): BridgeLinkTarget => ({ alias: 'docker', name: 'db', hostname: 'abc123def456', ip: '172.17.0.2', env: [], ports: [], ...over });

describe('a link on the default bridge: its environment variables as dockerd sets them', () => {
  test('a run of three or more consecutive ports gets _START/_END forms, then every port its four variables; the lowest port is ALIAS_PORT', () => {
    const env = linkEnvironment('web', target({ ports: ['6381/tcp', '6379/tcp', '6380/tcp'] }));
    expect(env.slice(0, 7)).toEqual([
      'DOCKER_PORT=tcp://172.17.0.2:6379',
      'DOCKER_PORT_6379_TCP_START=tcp://172.17.0.2:6379', 'DOCKER_PORT_6379_TCP_ADDR=172.17.0.2', 'DOCKER_PORT_6379_TCP_PROTO=tcp',
      'DOCKER_PORT_6379_TCP_PORT_START=6379', 'DOCKER_PORT_6379_TCP_END=tcp://172.17.0.2:6381', 'DOCKER_PORT_6379_TCP_PORT_END=6381',
    ]);
    expect(env).toContain('DOCKER_PORT_6380_TCP=tcp://172.17.0.2:6380');
    expect(env).toContain('DOCKER_PORT_6381_TCP_PORT=6381');
    expect(env.at(-1)).toBe('DOCKER_NAME=/web/docker');
  });
  test('two consecutive ports are no range; at one number tcp comes first, and both count toward a run as dockerd\'s nextContiguous counts them', () => {
    expect(linkEnvironment('web', target({ ports: ['80/tcp', '81/tcp'] })).filter((e) => e.includes('_START'))).toEqual([]);
    const env = linkEnvironment('web', target({ ports: ['53/udp', '53/tcp', '54/tcp'] }));
    expect(env[0]).toBe('DOCKER_PORT=tcp://172.17.0.2:53');
    expect(env.filter((e) => e.includes('_START'))).toEqual(['DOCKER_PORT_53_TCP_START=tcp://172.17.0.2:53', 'DOCKER_PORT_53_TCP_PORT_START=53']);
  });
  test('the alias is upper-cased with - as _; the linked container\'s variables come as ALIAS_ENV_*, but HOME and PATH', () => {
    expect(linkEnvironment('web', target({ alias: 'my-db', env: ['PATH=/bin', 'HOME=/root', 'A=1=2', 'NOVALUE'] }))).toEqual(['MY_DB_NAME=/web/my-db', 'MY_DB_ENV_A=1=2']);
  });
  test('the container\'s own variables win over a link\'s', () => {
    expect(withLinkEnvironment(['DOCKER_NAME=mine', 'X=1'], ['DOCKER_NAME=/web/docker', 'DOCKER_ENV_Y=2'])).toEqual(['DOCKER_ENV_Y=2', 'DOCKER_NAME=mine', 'X=1']);
  });
});

describe('a link on the default bridge: its /etc/hosts line as dockerd writes it', () => {
  test('address, alias, hostname, and the name unless the alias is the name', () => {
    expect(linkHostsLine(target())).toBe('172.17.0.2\tdocker abc123def456 db');
    expect(linkHostsLine(target({ alias: 'db' }))).toBe('172.17.0.2\tdb abc123def456');
  });
});
