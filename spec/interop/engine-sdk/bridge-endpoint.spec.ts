import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';
import { DOCKERD_IMAGE, bwrap, dockerPy, runDockerPyFixture, type Probe } from '../support/docker-py.js';

// docker-py's test_create_with_linklocal_ips and test_create_with_driveropt give the predefined
// bridge's endpoint link-local IPs and driver options. dockerd adds the address and keeps the
// options (shown in inspect); the sandbox took both and dropped them. It now refuses them by
// name, as it does on a user-defined network: a difference kept on purpose (its user-mode
// network adds no link-local address, and has no driver to hand options to).
jest.setTimeout(120_000);

function probe(socket: string, image: string): Promise<Probe> {
  return runDockerPyFixture('docker-py-bridge-endpoint.py', [image], socket) as Promise<Probe>;
}

describeWithPeers('docker-py 7 against dockerd (the reference): the bridge endpoint\'s link-local IPs and driver options are taken and shown in inspect', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], () => {
  let out: Probe;
  beforeAll(async () => { out = await probe('/var/run/docker.sock', DOCKERD_IMAGE); });
  test('IPAMConfig.LinkLocalIPs and DriverOpts come back as given', () => {
    expect(out).toEqual({
      link_local: { IPAMConfig: { LinkLocalIPs: ['169.254.8.8'] }, DriverOpts: null },
      driver_opt: { IPAMConfig: null, DriverOpts: { 'com.docker-py.setting': 'on' } },
    });
  });
});

describeWithPeers('docker-py 7 against the sandbox runtime: the bridge endpoint\'s link-local IPs and driver options are refused by name, never taken and dropped', [dockerPy, bwrap], () => {
  let out: Probe;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    close = async () => { await listening.close(); await runtime.close?.(); };
    out = await probe(listening.socket, 'busybox');
  });
  afterAll(async () => close?.());
  test('a 400 naming IPAMConfig.LinkLocalIPs, and one naming DriverOpts, with the reason', () => {
    expect(out).toEqual({
      link_local: ['APIError', 400, 'NetworkingConfig.EndpointsConfig "bridge": IPAMConfig.LinkLocalIPs is not supported by the sandbox runtime (its user-mode network adds no link-local address)'],
      driver_opt: ['APIError', 400, 'NetworkingConfig.EndpointsConfig "bridge": DriverOpts is not supported by the sandbox runtime (its predefined networks have no driver to pass them to)'],
    });
  });
});
