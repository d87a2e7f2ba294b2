/**
 * User-defined networks as the Docker CLI and docker-py use them, on the sandbox runtime and on
 * dockerd (the reference: the same commands, the same answers): a network with its own subnet,
 * containers reaching each other by address, name and alias through the network's DNS, connect
 * and disconnect at run time, IPv6 (`--ipv6`, `--ip6`), `--internal`, removal with active
 * endpoints, and prune.
 */
import { afterAll, expect, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { describeReference } from '../support/engine-user.js';
import { SANDBOX_PEERS, sandboxCli, type CliResult } from '../support/sandbox-cli.js';
import { DOCKER_CLI } from '../support/docker-cli.js';

const root: PeerCheck = { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };
const DOCKERD_IMAGE = 'busybox:local';

interface Target {
  cli(...args: string[]): Promise<CliResult>;
  image: string;
  host: () => Promise<string>;
}

/**
 * A command that succeeded: status 0 and nothing on stderr but the CLI's own note when it
 * cancels its events stream at exit (a client-side log line, not the server's answer).
 */
function expectOk(r: CliResult): void {
  expect({ code: r.code, stderr: r.stderr.split('\n').filter((l) => l !== '' && !/level=error msg="error getting events from daemon: context canceled"/.test(l)) }).toEqual({ code: 0, stderr: [] });
}

/** A unique name per run: dockerd is shared with other work on this machine. */
const tag = `dg${process.pid}`;

function networkScenarios(title: string, target: () => Target, subnetBase: string): void {
  const n = (s: string): string => `${tag}-${s}`;
  const docker = (...args: string[]): Promise<CliResult> => target().cli(...args);
  const cleanup = async (): Promise<void> => {
    await docker('rm', '-f', n('a'), n('b'), n('c'), n('pya'), n('s6'));
    await docker('network', 'rm', n('net'), n('other'), n('internal'), n('py'), n('aux'), n('six'));
  };
  afterAll(cleanup);

  test(`${title}: a network gets its subnet and gateway; a duplicate name is 409 and another driver is refused`, async () => {
    const made = await docker('network', 'create', '--subnet', `${subnetBase}.0/24`, '--label', 'team=net', n('net'));
    expectOk(made);
    expect(made.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    const view = JSON.parse((await docker('network', 'inspect', n('net'))).stdout)[0];
    expect(view).toMatchObject({ Name: n('net'), Driver: 'bridge', Scope: 'local', Internal: false, Labels: { team: 'net' }, IPAM: { Driver: 'default', Config: [{ Subnet: `${subnetBase}.0/24` }] } });
    expect((await docker('network', 'ls', '--filter', `name=${n('net')}`, '--format', '{{.Name}} {{.Driver}}')).stdout).toBe(`${n('net')} bridge\n`);
    const again = await docker('network', 'create', n('net'));
    // CLI 28 sends no CheckDuplicate (API 1.44's default is to check): dockerd 20.10 checks only when asked, so both answers are accepted.
    expect([0, 1]).toContain(again.code);
    if (again.code === 0) await docker('network', 'rm', again.stdout.trim());
    else expect(again.stderr).toContain(`network with name ${n('net')} already exists`);
    const overlay = await docker('network', 'create', '-d', 'nosuchdriver', n('other'));
    expect(overlay.code).toBe(1);
    expect(overlay.stderr).toContain('plugin "nosuchdriver" not found');
  });

  test(`${title}: IPAM's gateway, IP range and auxiliary addresses decide the addresses containers get`, async () => {
    expectOk(await docker('network', 'create', '--subnet', '10.89.99.0/24', '--gateway', '10.89.99.254', '--ip-range', '10.89.99.0/28', '--aux-address', 'host=10.89.99.1', n('aux')));
    const view = JSON.parse((await docker('network', 'inspect', n('aux'))).stdout)[0];
    expect(view.IPAM.Config).toEqual([{ Subnet: '10.89.99.0/24', IPRange: '10.89.99.0/28', Gateway: '10.89.99.254', AuxiliaryAddresses: { host: '10.89.99.1' } }]);
    const r = await docker('run', '--rm', '--network', n('aux'), target().image, 'sh', '-c', 'ip -4 addr | grep -o "inet 10.89.99.[0-9]*"; ip route | grep -c 10.89.99.254');
    expect(r.stdout).toBe('inet 10.89.99.2\n' + (title === 'sandbox' ? '0\n' : '1\n'));
  });

  test(`${title}: two containers on the network reach each other by address, name and alias`, async () => {
    const a = await docker('run', '-d', '--name', n('a'), '--network', n('net'), '--network-alias', 'web', '--ip', `${subnetBase}.50`, target().image, 'sleep', '60');
    expectOk(a);
    const view = JSON.parse((await docker('inspect', n('a'))).stdout)[0];
    const ep = view.NetworkSettings.Networks[n('net')];
    expect(ep).toMatchObject({ IPAddress: `${subnetBase}.50`, IPPrefixLen: 24, Gateway: `${subnetBase}.1`, MacAddress: `02:42:${subnetBase.split('.').map((p) => Number(p).toString(16).padStart(2, '0')).join(':')}:32`, IPAMConfig: { IPv4Address: `${subnetBase}.50` } });
    expect(ep.Aliases).toEqual(expect.arrayContaining(['web', view.Id.slice(0, 12)]));
    expect(ep.EndpointID).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(view.NetworkSettings.Networks)).toEqual([n('net')]);
    expect(view.NetworkSettings.IPAddress).toBe('');
    const r = await docker('run', '--rm', '--network', n('net'), target().image, 'sh', '-c',
      `ping -c1 -W3 ${subnetBase}.50 >/dev/null && echo ip; ping -c1 -W3 ${n('a')} >/dev/null && echo name; ping -c1 -W3 web >/dev/null && echo alias; nslookup web | grep -c 'Address: ${subnetBase}.50'`);
    expect(r.stdout).toBe('ip\nname\nalias\n1\n');
    const members = JSON.parse((await docker('network', 'inspect', n('net'))).stdout)[0].Containers;
    expect(Object.values(members)).toEqual([expect.objectContaining({ Name: n('a'), IPv4Address: `${subnetBase}.50/24` })]);
  });

  test(`${title}: --network container:NAME shares that running container's network (its address, its DNS)`, async () => {
    const r = await docker('run', '--rm', '--network', `container:${n('a')}`, target().image, 'sh', '-c', `ip -4 addr | grep -c 'inet ${subnetBase}.50/'; ping -c1 -W3 web >/dev/null && echo alias`);
    expect(r.stdout).toBe('1\nalias\n');
  });

  test(`${title}: removing a network with a running container is refused (403, active endpoints)`, async () => {
    const r = await docker('network', 'rm', n('net'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error while removing network: network .* has active endpoints/);
  });

  test(`${title}: connect and disconnect at run time add and take away the container's leg on the network`, async () => {
    expectOk(await docker('network', 'create', n('other')));
    expectOk(await docker('run', '-d', '--name', n('b'), '--network', n('other'), target().image, 'sleep', '60'));
    // From a, on the network: b answers only while connected (a fresh container could take b's freed address).
    const ping = (name: string): Promise<CliResult> => docker('exec', n('a'), 'sh', '-c', `ping -c1 -W3 ${name}`);
    expect((await ping('bee')).code).not.toBe(0);
    const connected = await docker('network', 'connect', '--alias', 'bee', n('net'), n('b'));
    expectOk(connected);
    const nets = JSON.parse((await docker('inspect', n('b'))).stdout)[0].NetworkSettings.Networks;
    const address = nets[n('net')].IPAddress as string;
    expect((await ping(address)).code).toBe(0);
    expect((await ping('bee')).code).toBe(0);
    // And b, connected while running, resolves the network's names from then on.
    expect((await docker('exec', n('b'), 'sh', '-c', `ping -c1 -W3 ${n('a')}`)).code).toBe(0);
    expect(nets[n('net')]).toMatchObject({ IPAddress: expect.stringMatching(new RegExp(`^${subnetBase.replace(/\./g, '\\.')}\\.\\d+$`)) });
    expect(nets[n('net')].Aliases).toEqual(expect.arrayContaining(['bee']));
    const twice = await docker('network', 'connect', n('net'), n('b'));
    expect(twice.stderr).toContain(`endpoint with name ${n('b')} already exists in network ${n('net')}`);
    expectOk(await docker('network', 'disconnect', n('net'), n('b')));
    expect((await ping(address)).code).not.toBe(0);
    expect(Object.keys(JSON.parse((await docker('inspect', n('b'))).stdout)[0].NetworkSettings.Networks)).not.toContain(n('net'));
  });

  test(`${title}: docker network create --ipv6 gives containers a v6 address too (--ip6 fixes one); they reach each other over v6 by name`, async () => {
    // fd00:59:7:: beside 10.89.107.0/24 for 10.89.7, and so on: a pair of its own per engine.
    const [a, b, c] = subnetBase.split('.').map(Number) as [number, number, number];
    const v6 = `fd00:${b.toString(16)}:${c.toString(16)}::`;
    const v4Subnet = `${a}.${b}.${c + 100}.0/24`;
    expectOk(await docker('network', 'create', '--ipv6', '--subnet', `${v6}/64`, '--subnet', v4Subnet, n('six')));
    const view = JSON.parse((await docker('network', 'inspect', n('six'))).stdout)[0];
    expect({ EnableIPv6: view.EnableIPv6, v6: view.IPAM.Config[1] }).toEqual({ EnableIPv6: true, v6: { Subnet: `${v6}/64` } });
    expectOk(await docker('run', '-d', '--name', n('s6'), '--network', n('six'), '--ip6', `${v6}66`, target().image, 'sleep', '60'));
    const ep = JSON.parse((await docker('inspect', n('s6'))).stdout)[0].NetworkSettings.Networks[n('six')];
    expect(ep).toMatchObject({ GlobalIPv6Address: `${v6}66`, GlobalIPv6PrefixLen: 64, IPv6Gateway: `${v6}1`, IPAMConfig: { IPv6Address: `${v6}66` } });
    const r = await docker('run', '--rm', '--network', n('six'), target().image, 'sh', '-c',
      `busybox ip -6 -o addr show scope global | busybox grep -o "${v6}[0-9a-f]*/64"; busybox ping -6 -c1 -W3 ${n('s6')} | busybox grep -o "from ${v6}66"`);
    expect(r.stdout).toBe(`${v6}2/64\nfrom ${v6}66\n`);
    const outside = await docker('run', '--rm', '--network', n('six'), '--ip6', 'fd00:ffff::5', target().image, 'true');
    expect(outside.stderr).toContain("Invalid address fd00:ffff::5: It does not belong to any of this network's subnets");
  });

  test(`${title}: an --internal network connects its containers to each other and to nothing else`, async () => {
    expectOk(await docker('network', 'create', '--internal', '--label', `prune=${tag}`, n('internal')));
    expect(JSON.parse((await docker('network', 'inspect', n('internal'))).stdout)[0].Internal).toBe(true);
    expectOk(await docker('run', '-d', '--name', n('c'), '--network', n('internal'), target().image, 'sleep', '60'));
    // A host service on every address, reached at the host's own address: a container on a
    // user network reaches it (through its way out), one on an internal network does not.
    const server = createServer((s) => s.end('+PONG\n'));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as { port: number }).port;
    const address = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';
    try {
      const r = await docker('run', '--rm', '--network', n('internal'), target().image, 'sh', '-c', `ping -c1 -W3 ${n('c')} >/dev/null && echo peer; timeout 3 nc ${address} ${port} </dev/null; echo end`);
      // dockerd lets an internal network's containers reach the host's own addresses (only
      // traffic leaving the host is dropped); the sandbox's have no way out at all.
      expect(r.stdout).toMatch(title === 'sandbox' ? /^peer\nend\n$/ : /^peer\n(\+PONG\n)?end\n$/);
      const out = await docker('run', '--rm', '--network', n('net'), target().image, 'sh', '-c', `timeout 3 nc ${address} ${port} </dev/null`);
      expect(out.stdout).toBe('+PONG\n');
    } finally {
      server.close();
    }
  });

  test(`${title}: prune removes the networks no running container uses (here, those of one label)`, async () => {
    // Only this run's label: dockerd's other networks on this machine are not ours to prune.
    const kept = await docker('network', 'prune', '-f', '--filter', `label=prune=${tag}`);
    expect(kept.stdout).not.toContain(n('internal'));
    await docker('rm', '-f', n('c'));
    const pruned = await docker('network', 'prune', '-f', '--filter', `label=prune=${tag}`);
    expect(pruned.stdout).toBe(`Deleted Networks:\n${n('internal')}\n\n`);
    expect((await docker('network', 'ls', '--format', '{{.Name}}')).stdout.split('\n')).toEqual(expect.arrayContaining([n('net')]));
    expect((await docker('network', 'ls', '--format', '{{.Name}}')).stdout.split('\n')).not.toContain(n('internal'));
  });

  test(`${title}: docker-py creates a network and runs two containers that find each other by name`, async () => {
    if (!dockerPy.available()) return;
    const script = [
      'import docker, sys',
      'c = docker.DockerClient(base_url=sys.argv[1])',
      `net = c.networks.create('${n('py')}', driver='bridge')`,
      `srv = c.containers.run('${target().image}', ['sleep', '60'], name='${n('pya')}', network='${n('py')}', detach=True)`,
      'try:',
      `    out = c.containers.run('${target().image}', ['sh', '-c', 'ping -c1 -W3 ${n('pya')} >/dev/null && echo found'], network='${n('py')}', remove=True)`,
      '    print(out.decode().strip())',
      '    net.reload()',
      '    print(sorted(x.name for x in net.containers))',
      'finally:',
      '    srv.remove(force=True)',
      '    net.remove()',
    ].join('\n');
    const host = await target().host();
    const r = await new Promise<CliResult>((resolve) => {
      execFile('python3', ['-c', script, host], { timeout: 60_000 }, (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }));
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`found\n['${n('pya')}']\n`);
  });
}

describeWithPeers('user-defined networks on the sandbox runtime (Docker CLI 28, docker-py)', [...SANDBOX_PEERS, root], () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-nets-'));
  const sandbox = sandboxCli({ stateDir });
  afterAll(async () => {
    await sandbox.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  networkScenarios('sandbox', () => ({ cli: sandbox.cli, image: 'busybox', host: async () => `unix://${await sandbox.socket()}` }), '10.89.7');
});

describeWithPeers('the sandbox\'s default bridge: containers on it reach each other by address, not by name (as dockerd\'s docker0)', [...SANDBOX_PEERS, root], () => {
  // dockerd on this machine runs without its default bridge, so the sandbox is checked alone.
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-bridge-'));
  const sandbox = sandboxCli({ stateDir });
  afterAll(async () => {
    await sandbox.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  test('inspect bridge shows 172.17.0.0/16 and its running containers; a second container pings the first by address; names do not resolve', async () => {
    const first = await sandbox.cli('run', '-d', '--name', `${tag}-first`, 'busybox', 'sleep', '60');
    expectOk(first);
    try {
      const address = JSON.parse((await sandbox.cli('inspect', `${tag}-first`)).stdout)[0].NetworkSettings.IPAddress as string;
      expect(address).toMatch(/^172\.17\.0\.\d+$/);
      const bridge = JSON.parse((await sandbox.cli('network', 'inspect', 'bridge')).stdout)[0];
      expect(bridge).toMatchObject({ Name: 'bridge', Driver: 'bridge', IPAM: { Config: [{ Subnet: '172.17.0.0/16', Gateway: '172.17.0.1' }] } });
      expect(bridge.Containers[first.stdout.trim()]).toMatchObject({ Name: `${tag}-first`, IPv4Address: `${address}/16` });
      const r = await sandbox.cli('run', '--rm', 'busybox', 'sh', '-c', `ping -c1 -W3 ${address} >/dev/null && echo address; ping -c1 -W2 ${tag}-first >/dev/null 2>&1 || echo no-name`);
      expect(r.stdout).toBe('address\nno-name\n');
    } finally {
      await sandbox.cli('rm', '-f', `${tag}-first`);
    }
  });
});

describeWithPeers('the sandbox keeps its networks across a restart of the server, as dockerd does', [...SANDBOX_PEERS, root], () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-nets-restart-'));
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
  test('a network made before the restart is listed after it, with its subnet', async () => {
    const before = sandboxCli({ stateDir });
    try {
      expectOk(await before.cli('network', 'create', '--subnet', '10.89.11.0/24', `${tag}-kept`));
    } finally {
      await before.close();
    }
    const after = sandboxCli({ stateDir });
    try {
      const view = JSON.parse((await after.cli('network', 'inspect', `${tag}-kept`)).stdout)[0];
      expect(view.IPAM.Config).toEqual([{ Subnet: '10.89.11.0/24' }]);
      expect((await after.cli('network', 'ls', '--filter', 'type=custom', '--format', '{{.Name}}')).stdout).toBe(`${tag}-kept\n`);
    } finally {
      await after.close();
    }
  });
});

describeReference('user-defined networks on dockerd 20.10 (the reference)', [dockerd(), dockerImage(DOCKERD_IMAGE)], () => {
  const configDir = mkdtempSync(join(tmpdir(), 'dockgate-nets-ref-'));
  const cli = (...args: string[]): Promise<CliResult> => new Promise((resolve) => {
    execFile(DOCKER_CLI, args, { env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: 'unix:///var/run/docker.sock', DOCKER_CONFIG: configDir }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
  networkScenarios('dockerd', () => ({ cli, image: DOCKERD_IMAGE, host: async () => 'unix:///var/run/docker.sock' }), '10.89.8');
});
