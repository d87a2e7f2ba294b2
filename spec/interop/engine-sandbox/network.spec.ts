import { test, expect, afterAll, beforeAll } from '@jest/globals';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { freePort } from '../support/free-port.js';
import { needsRange, sandboxServer } from '../support/engine-user.js';
import { socketRequest } from '../../engine/helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const slirp: PeerCheck = { name: 'slirp4netns (Debian slirp4netns)', available: () => spawnSync('slirp4netns', ['--version']).status === 0 };
const testcontainers: PeerCheck = { name: 'testcontainers 10 (npm devDependency)', available: () => existsSync(join(here, '../../../node_modules/testcontainers/package.json')) };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-net-cli-'));

type Result = { code: number; stdout: string; stderr: string };

function exec(file: string, args: string[], env: Record<string, string>, timeout = 30_000): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }, timeout }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A TCP server answering `+PONG` to anything, as the Redis of the issue does. */
async function pongServer(host: string): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.on('data', () => s.end('+PONG\r\n')).on('error', () => undefined));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** slirp4netns processes this server started (its children): the stacks still up. */
/** The slirp4netns processes this server started: its descendants (they are spawned by its helper processes, off-loop-command.ts). */
function stacks(): number[] {
  const rows = spawnSync('ps', ['-e', '-o', 'pid=,ppid=,comm='], { encoding: 'utf8' }).stdout.split('\n')
    .map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 3).map(([pid, ppid, comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm: comm! }));
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows) {
      if (ours.has(r.ppid) && !ours.has(r.pid)) {
        ours.add(r.pid);
        grew = true;
      }
    }
  }
  return rows.filter((r) => ours.has(r.pid) && /slirp4netns/.test(r.comm)).map((r) => r.pid);
}

/** An HTTP GET from the host; the body, or the error's code. */
async function get(url: string): Promise<string> {
  try {
    return await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
  } catch (error) {
    return `error: ${String((error as { cause?: { code?: string } }).cause?.code ?? error)}`;
  }
}

/** The host's first non-loopback IPv4 address: where a host service on 0.0.0.0 is reachable from outside. */
function hostAddress(): string | undefined {
  return Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

const HTTPD = 'mkdir -p /w && echo served from the container > /w/index.html && exec httpd -f -p 80 -h /w';

/** In the rootless pass (engine-user.ts): a container user other than root is refused there until the subordinate range is mapped. */
const otherUsers = needsRange('a container user other than root needs the subordinate range mapped through newuidmap');

describeWithPeers('the sandbox runtime gives each container its own network namespace (as dockerd\'s bridge mode)', [program(CLI), bwrap, slirp], () => {
  const listening = hasBwrap ? sandboxServer({}) : undefined;
  listening?.catch(() => undefined);
  let loopback: { server: Server; port: number };
  let anyAddress: { server: Server; port: number };
  beforeAll(async () => {
    loopback = await pongServer('127.0.0.1');
    anyAddress = await pongServer('0.0.0.0');
  });
  afterAll(async () => {
    loopback?.server.close();
    anyAddress?.server.close();
    await (await listening)?.close();
  });
  const docker = async (...args: string[]): Promise<Result> => exec(CLI, args, { DOCKER_HOST: `unix://${(await listening)!.socket}`, DOCKER_CONFIG: configDir });
  const run = (...args: string[]): Promise<Result> => docker('run', '--rm', ...args);
  const inspect = async (id: string): Promise<Record<string, any>> => JSON.parse((await socketRequest((await listening)!.socket, 'GET', `/containers/${id}/json`)).body.toString());

  test('it has a loopback of its own, eth0 with slirp4netns\'s address (its way out) and, as root, eth1 on the shared bridge; DNS goes to the stack\'s forwarder', async () => {
    const r = await run('busybox', 'sh', '-c', 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " " | sort; ip -4 addr show eth0 | grep inet; ip route | grep default; cat /etc/resolv.conf | grep nameserver');
    // The default bridge of namespaces we make needs root (network/sandbox-networks.ts).
    const bridge = process.getuid?.() === 0 ? 'eth1\\n' : '';
    expect(r.stdout).toMatch(new RegExp(`^eth0\\n${bridge}lo\\n\\s*inet 10\\.0\\.2\\.100/24 .*\\ndefault via 10\\.0\\.2\\.2 dev eth0 *\\nnameserver 10\\.0\\.2\\.3\\n$`));
  });

  otherUsers('a container in a user namespace (non-root -u), one on a terminal (-t) and one with --init get the same network', async () => {
    const probe = 'ip -4 addr show eth0 | grep -c 10.0.2.100';
    expect((await run('-u', '4242', 'busybox', 'sh', '-c', probe)).stdout).toBe('1\n');
    expect((await run('-t', 'busybox', 'sh', '-c', probe)).stdout).toBe('1\r\n');
    expect((await run('--init', 'busybox', 'sh', '-c', probe)).stdout).toBe('1\n');
  });

  test('a service on the host\'s loopback (the Redis of issue 18) answers no +PONG, neither at 127.0.0.1 nor through the gateway', async () => {
    const port = String(loopback.port);
    const r = await run('busybox', 'sh', '-c', `printf 'PING\\r\\n' | timeout 3 nc 127.0.0.1 ${port}; printf 'PING\\r\\n' | timeout 3 nc 10.0.2.2 ${port}; printf 'PING\\r\\n' | timeout 3 nc 10.0.2.2 ${anyAddress.port}; echo done`);
    expect(r.stdout).toBe('done\n');
    expect(r.stdout).not.toContain('PONG');
  });

  test('outbound traffic leaves through the stack: a host service on a non-loopback address is reachable', async () => {
    const address = hostAddress();
    if (address === undefined) return; // No interface but loopback: nothing outside to reach.
    const r = await run('busybox', 'sh', '-c', `printf 'PING\\r\\n' | timeout 3 nc ${address} ${anyAddress.port}`);
    expect(r.stdout).toBe('+PONG\r\n');
  });

  test('-p HOST_PORT:PORT publishes a port the host connects to; inspect, docker port and ps report it as dockerd does', async () => {
    const hostPort = await freePort();
    const created = await docker('run', '-d', '-p', `${hostPort}:80`, '--expose', '443', 'busybox', 'sh', '-c', HTTPD);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    try {
      let body = '';
      for (let i = 0; i < 50 && !body.startsWith('served'); i++) body = await get(`http://127.0.0.1:${hostPort}/index.html`);
      expect(body).toBe('served from the container\n');
      const view = await inspect(id);
      expect(view.HostConfig.PortBindings).toEqual({ '80/tcp': [{ HostIp: '', HostPort: String(hostPort) }] });
      expect(view.NetworkSettings.Ports).toEqual({ '80/tcp': [{ HostIp: '0.0.0.0', HostPort: String(hostPort) }], '443/tcp': null });
      // As root, the container is on the shared default bridge (172.17.0.0/16, dockerd's): that is its address, as dockerd reports it.
      const endpoint = process.getuid?.() === 0
        ? { IPAddress: expect.stringMatching(/^172\.17\.0\.\d+$/), IPPrefixLen: 16, Gateway: '172.17.0.1', MacAddress: expect.stringMatching(/^02:42:ac:11:00:[0-9a-f]{2}$/) }
        : { IPAddress: '10.0.2.100', IPPrefixLen: 24, Gateway: '10.0.2.2', MacAddress: '02:42:0a:00:02:64' };
      expect(view.NetworkSettings).toMatchObject(endpoint);
      expect(view.NetworkSettings.Networks.bridge).toMatchObject(endpoint);
      expect((await docker('port', id)).stdout).toBe(`80/tcp -> 0.0.0.0:${hostPort}\n`);
      expect((await docker('ps', '--filter', `id=${id}`, '--format', '{{.Ports}}|{{.Networks}}')).stdout).toBe(`443/tcp, 0.0.0.0:${hostPort}->80/tcp|bridge\n`);
      // docker exec joins the container's network namespace.
      expect((await docker('exec', id, 'sh', '-c', 'ip -4 addr show eth0 | grep -c 10.0.2.100')).stdout).toBe('1\n');
    } finally {
      await docker('rm', '-f', id);
    }
    expect(await get(`http://127.0.0.1:${hostPort}/index.html`)).toBe('error: ECONNREFUSED');
  });

  test('-p PORT and -P (with --expose) publish on ephemeral host ports; a stopped container reports none', async () => {
    const created = await docker('run', '-d', '-p', '127.0.0.1::80', '-P', '--expose', '81', 'busybox', 'sh', '-c', HTTPD);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    try {
      const ports = (await inspect(id)).NetworkSettings.Ports as Record<string, { HostIp: string; HostPort: string }[]>;
      expect(Object.keys(ports).sort()).toEqual(['80/tcp', '81/tcp']);
      expect(ports['80/tcp']).toEqual([{ HostIp: '127.0.0.1', HostPort: expect.stringMatching(/^\d+$/) }]);
      expect(ports['81/tcp']).toEqual([{ HostIp: '0.0.0.0', HostPort: expect.stringMatching(/^\d+$/) }]);
      let body = '';
      for (let i = 0; i < 50 && !body.startsWith('served'); i++) body = await get(`http://127.0.0.1:${ports['80/tcp']![0]!.HostPort}/index.html`);
      expect(body).toBe('served from the container\n');
      expect((await docker('port', id, '80/tcp')).stdout).toBe(`127.0.0.1:${ports['80/tcp']![0]!.HostPort}\n`);
      await docker('kill', id);
      expect((await inspect(id)).NetworkSettings.Ports).toEqual({});
    } finally {
      await docker('rm', '-f', id);
    }
  });

  test('what the stack cannot forward is refused at create, naming it; --network host and none take no published ports', async () => {
    expect((await docker('create', '-p', '80:80/sctp', 'busybox', 'true')).stderr).toContain('publishing sctp ports is not supported by the sandbox runtime');
    expect((await docker('create', '-p', '[::1]:80:80', 'busybox', 'true')).stderr).toContain('HostIp "::1" is not supported by the sandbox runtime');
    expect((await docker('create', '--network', 'host', '-p', '8080:80', 'busybox', 'true')).stderr).toContain('ports cannot be published with NetworkMode "host"');
    expect((await docker('create', '--network', 'none', '-p', '8080:80', 'busybox', 'true')).stderr).toContain('ports cannot be published with NetworkMode "none"');
  });

  test('a host port already taken fails the start with dockerd\'s words, and leaves no stack behind', async () => {
    const taken = await pongServer('0.0.0.0');
    try {
      const r = await run('-p', `${taken.port}:80`, 'busybox', 'true');
      expect(r.code).toBe(125);
      expect(r.stderr).toContain(`Bind for 0.0.0.0:${taken.port} failed: port is already allocated`);
    } finally {
      taken.server.close();
    }
    expect(stacks()).toEqual([]);
  });

  test('--network none keeps only lo; --network host keeps the host\'s interfaces', async () => {
    expect((await run('--network', 'none', 'busybox', 'sh', '-c', 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "')).stdout).toBe('lo\n');
    const hostIfaces = execFileSync('sh', ['-c', 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort'], { encoding: 'utf8' });
    expect((await run('--network', 'host', 'busybox', 'sh', '-c', 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort')).stdout).toBe(hostIfaces);
  });

  test('the stack goes with the container: none is left after rm -f of a running one, or after a run exits', async () => {
    const created = await docker('run', '-d', '-p', '80', 'busybox', 'sleep', '300');
    const id = created.stdout.trim();
    expect(stacks()).toHaveLength(1);
    await docker('rm', '-f', id);
    expect(stacks()).toEqual([]);
    await run('busybox', 'true');
    expect(stacks()).toEqual([]);
  });

  test('rm -f while the start is under way answers after the start, with the container and its stack gone', async () => {
    const socket = (await listening)!.socket;
    // Before, the removal answered at once and the start went on: its stack and `sleep 300` kept running, removed.
    for (const delayMs of [0, 5, 10, 20, 40]) {
      const id = (await docker('create', '-p', '80', 'busybox', 'sleep', '300')).stdout.trim();
      const starting = socketRequest(socket, 'POST', `/containers/${id}/start`);
      // The start is in its stages (the stack comes up after bwrap's launch) when the removal arrives.
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      expect((await socketRequest(socket, 'DELETE', `/containers/${id}?force=1`)).status).toBe(204);
      expect(stacks()).toEqual([]);
      expect((await starting).status).toBe(204);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stacks()).toEqual([]);
      expect((await socketRequest(socket, 'GET', `/containers/${id}/json`)).status).toBe(404);
    }
  });
});

describeWithPeers('testcontainers-node 10 reaches a sandbox container through its mapped port', [bwrap, slirp, testcontainers], () => {
  const listening = hasBwrap ? sandboxServer({}) : undefined;
  listening?.catch(() => undefined);
  afterAll(async () => {
    await (await listening)?.close();
  });
  test('withExposedPorts publishes the port; getMappedPort answers a host port that reaches the server inside', async () => {
    const r = await exec(process.execPath, [join(here, '../fixtures/testcontainers-mapped-port.mjs'), 'busybox:latest'], {
      DOCKER_HOST: `unix://${(await listening)!.socket}`,
      TESTCONTAINERS_RYUK_DISABLED: 'true',
      TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
    }, 60_000);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { id: string; port: number; reply: string };
    expect(out.reply).toBe('mapped through testcontainers\n');
    expect(out.port).toBeGreaterThan(0);
    await socketRequest((await listening)!.socket, 'DELETE', `/v1.41/containers/${out.id}?force=1`);
  }, 90_000);
});
