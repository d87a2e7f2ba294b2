/**
 * The Docker runtime forwards export, history, push, build and commit to dockerd: the Docker
 * CLI pointed at dockgate gets what it gets from dockerd itself, and the build context and the
 * build's message stream go through as streams.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { listenOnSocket } from '../../engine/helpers.js';
import { dockerCli, startTokenRegistry, type DockerCli, type ProgramResult, type RunningRegistry, type RunningTokenServer } from '../support/index.js';

/** A classic build's request with dockerd's defaults (what the router gives for an empty query). */
const BUILD_DEFAULTS = {
  dockerfile: 'Dockerfile', tags: [] as string[], nocache: false, pull: false, rm: true, forcerm: false, quiet: false,
  labels: {}, buildArgs: {}, cacheFrom: [] as string[], hostConfig: {}, containerLabels: {}, apiVersion: '1.41',
};

const SERVICE = 'registry.dockgate.test';
const ISSUER = 'dockgate-forward';
const PASSWORD = 'correct horse battery staple';

const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
function expectSuccess(r: ProgramResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

/** A build context tar, produced as it is read (the runtime must stream it, not wait for its end). */
function contextOf(files: Record<string, string>): PassThrough {
  const archive = pack();
  const out = new PassThrough();
  archive.pipe(out);
  void (async () => {
    for (const [name, content] of Object.entries(files)) {
      await new Promise<void>((resolve, reject) => archive.entry({ name, mode: 0o644, mtime: new Date(0) }, content, (err) => (err ? reject(err) : resolve())));
    }
    archive.finalize();
  })();
  return out;
}

describeWithPeers('the Docker runtime forwards export, history, push, build and commit to dockerd', [
  dockerd(), dockerImage('busybox:local'), program('docker-registry', ['--version']),
], () => {
  let runtime: ContainerRuntime;
  let listening: Awaited<ReturnType<typeof listenOnSocket>>;
  let cli: DockerCli;
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  const work = mkdtempSync(join(tmpdir(), 'dockgate-forward-'));
  const containers: string[] = [];
  const images: string[] = [];
  /** The CLI at dockgate (the Docker runtime in front of dockerd), or at dockerd itself. */
  const viaDockgate = (args: string[], timeoutMs?: number) => cli.docker(args, { env: { DOCKER_HOST: `unix://${listening.socket}` }, ...(timeoutMs ? { timeoutMs } : {}) });
  const direct = (args: string[], timeoutMs?: number) => cli.docker(args, { env: { DOCKER_HOST: 'unix:///var/run/docker.sock' }, ...(timeoutMs ? { timeoutMs } : {}) });

  beforeAll(async () => {
    runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
    listening = await listenOnSocket(runtime, '1.24-1.41');
    cli = await dockerCli();
    ({ token, registry } = await startTokenRegistry({ issuer: ISSUER, service: SERVICE, password: PASSWORD }));
    expectSuccess(await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: PASSWORD, env: { DOCKER_HOST: 'unix:///var/run/docker.sock' } }));
  }, 60_000);

  afterAll(async () => {
    for (const c of containers) await direct(['rm', '-f', c]);
    for (const i of images) await direct(['rmi', '-f', i]);
    await listening?.close();
    await runtime?.close?.();
    await cli?.dispose();
    await registry?.stop();
    await token?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test('docker export through dockgate: the same tar listing as dockerd\'s own export of the container', async () => {
    const name = `dg-forward-export-${process.pid}`;
    expectSuccess(await direct(['run', '--name', name, '--network', 'none', 'busybox:local', 'sh', '-c', 'echo hi > /f']));
    containers.push(name);
    expectSuccess(await viaDockgate(['export', '-o', join(work, 'via.tar'), name]));
    expectSuccess(await direct(['export', '-o', join(work, 'direct.tar'), name]));
    const list = (file: string) => execFileSync('tar', ['-tvf', file], { encoding: 'utf8' });
    expect(list(join(work, 'via.tar'))).toBe(list(join(work, 'direct.tar')));
    expect((await viaDockgate(['export', 'no-such-container'])).stderr).toBe((await direct(['export', 'no-such-container'])).stderr);
  }, 60_000);

  test('docker history through dockgate: dockerd\'s rows', async () => {
    const args = ['history', '--no-trunc', '--human=false', 'busybox:local'];
    expect((await viaDockgate(args)).stdout).toBe((await direct(args)).stdout);
  });

  test('docker push through dockgate: dockerd pushes with the CLI\'s credentials; a second push finds its layers there', async () => {
    const image = `${registry.host}/alice/forwarded:1`;
    expectSuccess(await direct(['tag', 'busybox:local', image]));
    images.push(image);
    const push = await viaDockgate(['push', image], 60_000);
    expectSuccess(push);
    expect(push.stdout).toContain(`The push refers to repository [${registry.host}/alice/forwarded]`);
    expect(push.stdout).toMatch(/^1: digest: sha256:[0-9a-f]{64} size: \d+$/m);
    const again = await viaDockgate(['push', image], 60_000);
    expect(again.stdout).toMatch(/: Layer already exists$/m);
    const denied = `${registry.host}/bob/forwarded:1`;
    expectSuccess(await direct(['tag', 'busybox:local', denied]));
    images.push(denied);
    const theirs = await direct(['push', denied], 60_000);
    const ours = await viaDockgate(['push', denied], 60_000);
    expect(theirs.code).not.toBe(0);
    expect({ code: ours.code, last: ours.stderr.trim().split('\n').at(-1) }).toEqual({ code: theirs.code, last: theirs.stderr.trim().split('\n').at(-1) });
  }, 120_000);

  test('build: the context streams to dockerd\'s classic builder and its message stream comes back (Step lines, the image ID)', async () => {
    const tag = `dg-forward-build:${process.pid}`;
    const progress = await runtime.build!({
      ...BUILD_DEFAULTS,
      context: contextOf({ Dockerfile: 'FROM busybox:local\nCOPY hello /hello\nCMD ["cat", "/hello"]\n', hello: 'built\n' }),
      tags: [tag],
      signal: new AbortController().signal,
    });
    images.push(tag);
    const lines = (await text(progress)).trim().split(/\r?\n/).map((l) => JSON.parse(l) as { stream?: string; aux?: { ID: string }; error?: string });
    expect(lines.find((l) => l.error)).toBeUndefined();
    expect(lines.map((l) => l.stream ?? '').join('')).toContain('Step 1/3 : FROM busybox:local');
    const id = lines.find((l) => l.aux)?.aux?.ID;
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const run = await direct(['run', '--rm', '--network', 'none', tag]);
    expect(run.stdout).toBe('built\n');
  }, 60_000);

  test('build: a failing RUN is the stream\'s errorDetail, in dockerd\'s words', async () => {
    const progress = await runtime.build!({
      ...BUILD_DEFAULTS,
      context: contextOf({ Dockerfile: 'FROM busybox:local\nRUN exit 3\n' }),
      forcerm: true,
      signal: new AbortController().signal,
    });
    expect(await text(progress)).toContain("The command '/bin/sh -c exit 3' returned a non-zero code: 3");
  }, 60_000);

  test('commit: dockerd commits with the changes and message asked; unknown container → 404 in its words', async () => {
    const name = `dg-forward-commit-${process.pid}`;
    expectSuccess(await direct(['run', '--name', name, '--network', 'none', 'busybox:local', 'sh', '-c', 'echo committed > /x']));
    containers.push(name);
    const repo = `dg-forward-commit-${process.pid}`;
    const { Id } = await runtime.commit!({ container: name, ref: `${repo}:1`, comment: 'via dockgate', pause: true, changes: ['CMD ["cat", "/x"]'], apiVersion: '1.41' });
    images.push(`${repo}:1`);
    expect(Id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await direct(['run', '--rm', '--network', 'none', `${repo}:1`])).stdout).toBe('committed\n');
    expect((await direct(['image', 'inspect', '--format', '{{.Comment}}', Id])).stdout.trim()).toBe('via dockgate');
    await expect(runtime.commit!({ container: 'no-such-container', pause: true, changes: [], apiVersion: '1.41' })).rejects.toMatchObject({ status: 404, message: 'No such container: no-such-container' });
  }, 60_000);
});
