/**
 * User-defined networks of the sandbox runtime run rootless: the demo as an ordinary user
 * (spec/interop/support/rootless-demo.ts), driven by Docker CLI 28. Their namespaces, bridges,
 * veths and DNS live in a user namespace the engine holds, under which its containers run.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync, readlinkSync } from 'node:fs';
import { describeWithPeers } from '../../support/peers.js';
import { freePort } from '../support/free-port.js';
import { descendants, idsOf, rootlessPeers, ROOTLESS_USER, startRootlessDemo, type RootlessDemo } from '../support/rootless-demo.js';

const ids = idsOf(ROOTLESS_USER);

/** The first line of `/proc/PID/status` starting with `field:`, split. */
function statusField(pid: number, field: string): string[] {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`)) ?? '';
  return line.split(/\s+/).slice(1);
}

describeWithPeers(`user-defined networks run rootless: the demo as ${ROOTLESS_USER}, driven by Docker CLI 28`, rootlessPeers(ids), () => {
  let server: RootlessDemo;

  beforeAll(async () => {
    server = await startRootlessDemo(ids!);
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('docker network create makes a network whose containers reach each other by name', () => {
    test('network create answers with its id; a second container resolves the first by name (nslookup) and pings it', async () => {
      const { docker } = server;
      const created = await docker(['network', 'create', 'rl-net']);
      expect(created.stderr).toBe('');
      expect(created.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
      try {
        expect((await docker(['run', '-d', '--network', 'rl-net', '--name', 'rl-web', 'busybox', 'sleep', '60'])).code).toBe(0);
        const ip = (await docker(['inspect', '-f', '{{(index .NetworkSettings.Networks "rl-net").IPAddress}}', 'rl-web'])).stdout.trim();
        expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
        const r = await docker(['run', '--rm', '--network', 'rl-net', 'busybox', 'sh', '-c', 'nslookup rl-web && ping -c1 -W2 rl-web']);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain(`Address: ${ip}`);
        expect(r.stdout).toContain('1 packets received');
      } finally {
        await docker(['rm', '-f', 'rl-web']);
        await docker(['network', 'rm', 'rl-net']);
      }
    });

    test('docker network connect plugs a running container in; it reaches the network\'s members by name, and leaves with disconnect', async () => {
      const { docker } = server;
      await docker(['network', 'create', 'rl-conn']);
      try {
        await docker(['run', '-d', '--network', 'rl-conn', '--name', 'rl-member', 'busybox', 'sleep', '60']);
        await docker(['run', '-d', '--name', 'rl-lone', 'busybox', 'sleep', '60']);
        expect((await docker(['network', 'connect', 'rl-conn', 'rl-lone'])).code).toBe(0);
        expect(await docker(['exec', 'rl-lone', 'ping', '-c1', '-W2', 'rl-member'])).toMatchObject({ code: 0 });
        expect((await docker(['network', 'disconnect', 'rl-conn', 'rl-lone'])).code).toBe(0);
        expect((await docker(['exec', 'rl-lone', 'ping', '-c1', '-W1', 'rl-member'])).code).not.toBe(0);
      } finally {
        await docker(['rm', '-f', 'rl-member', 'rl-lone']);
        await docker(['network', 'rm', 'rl-conn']);
      }
    });
  });

  describe('--network container:NAME shares that container\'s network, with the capabilities its root has there', () => {
    test('the joiner sees the member\'s address, resolves the network\'s names and pings (a raw socket in the joined namespace)', async () => {
      const { docker } = server;
      await docker(['network', 'create', '--subnet', '10.89.21.0/24', 'rl-join']);
      try {
        await docker(['run', '-d', '--network', 'rl-join', '--ip', '10.89.21.50', '--network-alias', 'rl-alias', '--name', 'rl-joined', 'busybox', 'sleep', '60']);
        const r = await docker(['run', '--rm', '--network', 'container:rl-joined', 'busybox', 'sh', '-c', 'ip -4 addr | grep -c "inet 10.89.21.50/"; ping -c1 -W3 rl-alias >/dev/null && echo pinged']);
        expect(r).toMatchObject({ code: 0, stdout: '1\npinged\n' });
      } finally {
        await docker(['rm', '-f', 'rl-joined']);
        await docker(['network', 'rm', 'rl-join']);
      }
    });
  });

  describe('-p on a user-defined network publishes the port on the host', () => {
    test('a server on the network answers on the published port from the host, and by name from the network', async () => {
      const { docker } = server;
      const port = await freePort();
      await docker(['network', 'create', 'rl-pub']);
      try {
        const run = await docker(['run', '-d', '--network', 'rl-pub', '--name', 'rl-srv', '-p', `${port}:80`, 'busybox', 'sh', '-c',
          'while true; do printf "HTTP/1.0 200 OK\\r\\n\\r\\nrootless-net\\n" | nc -l -p 80; done']);
        expect(run.code).toBe(0);
        let body = '';
        for (let i = 0; i < 50 && body !== 'rootless-net\n'; i++) {
          body = await fetch(`http://127.0.0.1:${port}/`).then((res) => res.text(), () => '');
          if (body !== 'rootless-net\n') await new Promise((r) => setTimeout(r, 100));
        }
        expect(body).toBe('rootless-net\n');
        const inside = await docker(['run', '--rm', '--network', 'rl-pub', 'busybox', 'sh', '-c', 'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc rl-srv 80']);
        expect(inside.stdout).toContain('rootless-net');
      } finally {
        await docker(['rm', '-f', 'rl-srv']);
        await docker(['network', 'rm', 'rl-pub']);
      }
    });
  });

  describe('the networks\' namespaces belong to the engine\'s own user namespace, held by a process of the server\'s user', () => {
    test('with a network up, every process below the server runs as its user, and the DNS relay is in a user namespace other than the host\'s', async () => {
      const { docker } = server;
      await docker(['network', 'create', 'rl-own']);
      try {
        await docker(['run', '-d', '--network', 'rl-own', '--name', 'rl-owned', 'busybox', 'sleep', '60']);
        const hostUserns = readlinkSync('/proc/self/ns/user');
        let relays = 0;
        for (const pid of descendants(server.child.pid!)) {
          let cmdline: string;
          let uid: string[];
          let userns: string;
          try {
            cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
            uid = statusField(pid, 'Uid');
            userns = readlinkSync(`/proc/${pid}/ns/user`);
          } catch {
            continue; // gone meanwhile
          }
          expect({ pid, cmdline, uid }).toEqual({ pid, cmdline, uid: Array(4).fill(String(ids!.uid)) });
          if (cmdline.includes('dgram')) {
            relays++;
            expect(userns).not.toBe(hostUserns);
          }
        }
        expect(relays).toBeGreaterThanOrEqual(1);
      } finally {
        await docker(['rm', '-f', 'rl-owned']);
        await docker(['network', 'rm', 'rl-own']);
      }
    });
  });
});
