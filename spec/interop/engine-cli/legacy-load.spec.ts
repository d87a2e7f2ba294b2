/**
 * `docker load` of the format `docker save` wrote before Docker 1.10 (`repositories`, and per
 * layer `<id>/json`, `<id>/layer.tar`, `<id>/VERSION`; dockerode's test-load.tar is one): dockerd
 * 20.10 still loads it, making an image per layer. The Docker CLI loads the same archive into
 * dockerd on this machine (the reference) and into the sandbox runtime, which must make the same
 * images (the same ids: the configs are dockerd's byte for byte) and run them.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, type PeerCheck } from '../../support/peers.js';
import { dockerAt } from '../support/docker-cli.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const work = mkdtempSync(join(tmpdir(), 'dockgate-legacy-load-'));
const configDir = join(work, 'config');
mkdirSync(configDir);
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
const docker = dockerAt(configDir);
const NAME = `dg-legacy-${process.pid}`;
const BASE = 'a'.repeat(63) + '1';
const TOP = 'b'.repeat(63) + '2';
const archive = join(work, 'legacy.tar');

/** A v1 image JSON as Docker 1.8 wrote it (keys dockerd drops among them). */
function v1Json(id: string, parent: string | undefined, created: string, cmd: string[], runCmd: string[] | null): string {
  const config = (c: string[] | null) => ({ Hostname: 'h', Domainname: '', User: '', AttachStdin: false, AttachStdout: false, AttachStderr: false, ExposedPorts: null, PublishService: '', Tty: false, OpenStdin: false, StdinOnce: false, Env: ['PATH=/bin'], Cmd: c, Image: parent ?? '', Volumes: null, VolumeDriver: '', WorkingDir: '', Entrypoint: null, NetworkDisabled: false, MacAddress: '', OnBuild: null, Labels: { 'a<b': 'x&y' } });
  return JSON.stringify({ id, ...(parent ? { parent } : {}), created, container: 'c'.repeat(64), container_config: config(cmd), docker_version: '1.8.2', config: config(runCmd), architecture: 'amd64', os: 'linux', Size: 0 });
}

beforeAll(() => {
  const root = join(work, 'archive');
  const layer = (id: string, files: Record<string, [string | Buffer, number]>) => {
    const dir = join(work, `layer-${id}`);
    for (const [path, [content, mode]] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), content, { mode });
    }
    mkdirSync(join(root, id), { recursive: true });
    spawnSync('tar', ['--sort=name', '--mtime=2015-10-13 00:00Z', '--owner=0', '--group=0', '-C', dir, '-cf', join(root, id, 'layer.tar'), '.']);
    writeFileSync(join(root, id, 'VERSION'), '1.0');
  };
  layer(BASE, { 'bin/busybox': [existsSync('/bin/busybox') ? readFileSync('/bin/busybox') : '', 0o755] });
  layer(TOP, { 'hello.txt': ['from a v1 layer\n', 0o644] });
  writeFileSync(join(root, BASE, 'json'), v1Json(BASE, undefined, '2015-10-13T23:47:48.522046200Z', ['/bin/sh', '-c', '#(nop) ADD busybox'], null));
  writeFileSync(join(root, TOP, 'json'), v1Json(TOP, BASE, '2015-10-13T23:47:48.954129267+00:00', ['/bin/sh', '-c', '#(nop) ADD hello.txt'], ['/bin/busybox', 'cat', '/hello.txt']));
  writeFileSync(join(root, 'repositories'), JSON.stringify({ [NAME]: { latest: TOP } }));
  spawnSync('tar', ['-C', root, '-cf', archive, 'repositories', BASE, TOP]);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const engines: [string, PeerCheck[], () => Promise<{ socket: string; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerd()], async () => ({ socket: '/var/run/docker.sock' })],
  ['the sandbox runtime', [bwrap], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { socket: listening.socket, close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

const results: Record<string, Record<string, unknown>> = {};
for (const [label, peers, open] of engines) {
  describeWithPeers(`docker load of a pre-1.10 archive (${label}): an image per layer, as dockerd 20.10 makes them`, peers, () => {
    let out: Record<string, unknown>;
    let engine: { socket: string; close?: () => Promise<void> };
    beforeAll(async () => {
      engine = await open();
      const loaded = await docker(engine.socket, ['load', '-i', archive]);
      const inspect = JSON.parse((await docker(engine.socket, ['image', 'inspect', NAME])).stdout)[0];
      const history = (await docker(engine.socket, ['history', '--no-trunc', '--format', '{{.CreatedBy}}', NAME])).stdout;
      const ran = await docker(engine.socket, ['run', '--rm', '--network', 'none', NAME]);
      out = { load: [loaded.code, loaded.stdout], id: inspect.Id, parent: inspect.Parent, layers: inspect.RootFS.Layers.length, cmd: inspect.Config.Cmd, labels: inspect.Config.Labels, created: inspect.Created, history, ran: [ran.code, ran.stdout] };
      results[label] = out;
    }, 120_000);
    afterAll(async () => {
      await docker(engine.socket, ['rmi', '-f', NAME]);
      await engine.close?.();
    });

    test('the load succeeds, printing no "Loaded image" line (dockerd\'s legacy loader prints none)', () => {
      expect(out.load).toEqual([0, '']);
    });
    test('the tag names the top layer\'s image, whose parent is the base layer\'s; both layers are in its RootFS; its config is the v1 config', () => {
      expect(out.parent).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(out.layers).toBe(2);
      expect(out.cmd).toEqual(['/bin/busybox', 'cat', '/hello.txt']);
      expect(out.labels).toEqual({ 'a<b': 'x&y' });
      expect(out.created).toBe('2015-10-13T23:47:48.954129267Z');
      expect(out.history).toBe('/bin/sh -c #(nop) ADD hello.txt\n/bin/sh -c #(nop) ADD busybox\n');
    });
    test('it runs', () => {
      expect(out.ran).toEqual([0, 'from a v1 layer\n']);
    });
    test('the image ids are dockerd\'s (the configs it makes are written as Go writes them)', () => {
      const reference = results['dockerd (the reference)'];
      if (label === 'the sandbox runtime' && reference) expect({ id: out.id, parent: out.parent }).toEqual({ id: reference.id, parent: reference.parent });
      expect(out.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    });
  });
}

describeWithPeers('docker load of a broken pre-1.10 archive (the sandbox runtime): a 400 naming what is wrong, nothing loaded', [bwrap], () => {
  let engine: { socket: string; close?: () => Promise<void> };
  beforeAll(async () => {
    engine = await engines[1]![2]();
  });
  afterAll(async () => engine.close?.());

  const broken = (name: string, files: Record<string, string>): string => {
    const dir = join(work, `broken-${name}`);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    const file = join(work, `broken-${name}.tar`);
    spawnSync('tar', ['-C', dir, '-cf', file, '.']);
    return file;
  };

  test.each([
    ['a repositories entry that is no layer id (a path)', { repositories: JSON.stringify({ x: { latest: '../../etc' } }) }, 'invalid image archive: repositories entry x:latest does not name a layer id'],
    ['a layer without its json', { repositories: JSON.stringify({ x: { latest: TOP } }) }, `invalid image archive: ${TOP}/json is missing`],
    ['a layer whose parent is itself', { repositories: JSON.stringify({ x: { latest: TOP } }), [`${TOP}/json`]: JSON.stringify({ id: TOP, parent: TOP }), [`${TOP}/layer.tar`]: '' }, `invalid image archive: layer ${TOP} is its own ancestor`],
  ])('%s', async (_what, files, message) => {
    const r = await docker(engine.socket, ['load', '-i', broken(String(_what).length.toString(), files)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
  });
});
