/**
 * docker export, docker history and docker push against the sandbox runtime, with dockerd's
 * answers as the reference: the same image (busybox:local, moved over with save/load) exported
 * and listed by both; a push to registry 2.8 trusting a dockgate token service, then pulled and
 * run by dockerd; refusals compared word for word with dockerd's.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import { dockerCli, startTokenRegistry, type DockerCli, type ProgramResult, type RunningRegistry, type RunningTokenServer } from '../support/index.js';
import { SANDBOX_PEERS, sandboxCli, type CliResult, type SandboxCli } from '../support/sandbox-cli.js';
import { ImageStore } from '../../../lib/engine/images/index.js';
import { sha256Of } from '../../../lib/engine/images/store/digest.js';
import { tarOf } from '../../engine/images/tar-fixture.js';
import { pack } from 'tar-stream';

/** A docker-archive (`docker save` layout) of one image with these layers, tagged `tag`; read while it is written. */
async function archiveOf(layers: Buffer[], tag: string): Promise<Buffer> {
  const config = Buffer.from(JSON.stringify({
    architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: layers.map((l) => sha256Of(l)) },
    history: layers.map((_, i) => ({ created: '2024-05-01T00:00:00Z', created_by: `step ${i}` })),
  }));
  const files = [
    ...layers.map((content, i) => ({ name: `l${i}/layer.tar`, content })),
    { name: 'cfg.json', content: config },
    { name: 'manifest.json', content: Buffer.from(JSON.stringify([{ Config: 'cfg.json', RepoTags: [tag], Layers: layers.map((_, i) => `l${i}/layer.tar`) }])) },
  ];
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => archive.on('end', () => resolve()));
  for (const f of files) await new Promise<void>((resolve, reject) => archive.entry({ name: f.name }, f.content, (e) => (e ? reject(e) : resolve())));
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

const SERVICE = 'registry.dockgate.test';
const ISSUER = 'dockgate-push';
const PASSWORD = 'correct horse battery staple';
const MAP = { uid: 100000, gid: 100000, size: 65536 };
const root = { name: 'root (the user namespace map)', available: () => process.getuid?.() === 0 };

const shown = (r: ProgramResult | CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
function expectSuccess(r: ProgramResult | CliResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}

/** Entries of a tar file: name, owner, mode bits and size (what `tar -tv` shows but the times). */
async function entries(file: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const ex = extract();
  ex.on('entry', (h, stream, next) => {
    // Permission bits: dockerd's Go writer also sets the type bits (0100000 for a file), which GNU tar leaves to the type flag.
    out.set(h.name, `${h.type} ${h.uid}:${h.gid} ${((h.mode ?? 0) & 0o7777).toString(8)} ${h.type === 'file' ? h.size : ''}${h.linkname ? ` -> ${h.linkname}` : ''}`);
    stream.on('end', next);
    stream.resume();
  });
  await new Promise<void>((resolve, reject) => {
    ex.on('finish', resolve);
    ex.on('error', reject);
    Readable.from([readFileSync(file)]).pipe(ex);
  });
  return out;
}

/**
 * What dockerd's export holds that is its init layer and mount points, not the image or the
 * container's writes (and the sandbox's mount points for the same files).
 */
const MOUNT_POINTS = ['.dockerenv', 'dev/', 'dev/console', 'dev/pts/', 'dev/shm/', 'etc/', 'etc/hostname', 'etc/hosts', 'etc/mtab', 'etc/resolv.conf', 'proc/', 'sys/'];
const withoutMountPoints = (m: Map<string, string>) => new Map([...m].filter(([name]) => !MOUNT_POINTS.includes(name)));

/** The final error line the CLI prints for a failed push. */
const lastLine = (r: ProgramResult | CliResult) => `${r.stdout}\n${r.stderr}`.trim().split('\n').filter((l) => l.trim() !== '').at(-1)?.trim() ?? '';

describeWithPeers('docker export, history and push: the sandbox runtime against dockerd', [
  dockerd(), program('docker-registry', ['--version']), dockerImage('busybox:local'), ...SANDBOX_PEERS, root,
], () => {
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  let cli: DockerCli;
  let anonymous: DockerCli;
  let sandbox: SandboxCli;
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-push-export-'));
  const work = mkdtempSync(join(tmpdir(), 'dockgate-push-export-files-'));
  const daemonContainers: string[] = [];
  const daemonImages: string[] = [];

  beforeAll(async () => {
    ({ token, registry } = await startTokenRegistry({ issuer: ISSUER, service: SERVICE, password: PASSWORD }));
    cli = await dockerCli();
    anonymous = await dockerCli();
    sandbox = sandboxCli({ stateDir, userns: MAP });
    expectSuccess(await cli.docker(['save', '-o', join(work, 'busybox.tar'), 'busybox:local']));
    expectSuccess(await sandbox.cli('load', '-i', join(work, 'busybox.tar')));
    expectSuccess(await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: PASSWORD }));
    expectSuccess(await sandbox.cliWithInput(Buffer.from(PASSWORD), 'login', registry.host, '-u', 'alice', '--password-stdin'));
  }, 120_000);

  afterAll(async () => {
    for (const c of daemonContainers) await cli?.docker(['rm', '-f', c]);
    for (const i of daemonImages) await cli?.docker(['rmi', '-f', i]);
    await cli?.dispose();
    await anonymous?.dispose();
    await sandbox?.close();
    await registry?.stop();
    await token?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  test('docker export: the same entries with the same owners, modes and sizes as dockerd\'s for the same image and writes (owners as inside the user namespace)', async () => {
    const name = `dg-export-${process.pid}`;
    const script = 'echo hi > /f; chown 1000:1000 /f; mkdir /d; chmod 700 /d; echo s > /d/secret; ln -s /f /d/link; rm /bin/ls';
    expectSuccess(await cli.docker(['run', '--name', name, '--network', 'none', 'busybox:local', 'sh', '-c', script]));
    daemonContainers.push(name);
    expectSuccess(await sandbox.cli('run', '--name', name, '--network', 'none', 'busybox:local', 'sh', '-c', script));
    expectSuccess(await cli.docker(['export', '-o', join(work, 'daemon.tar'), name]));
    expectSuccess(await sandbox.cli('export', '-o', join(work, 'sandbox.tar'), name));
    const daemon = await entries(join(work, 'daemon.tar'));
    const ours = await entries(join(work, 'sandbox.tar'));
    expect(ours.get('f')).toBe('file 1000:1000 644 3');
    expect(ours.get('d/secret')).toBe(daemon.get('d/secret'));
    expect(ours.has('bin/ls')).toBe(false);
    expect(Object.fromEntries(withoutMountPoints(ours))).toEqual(Object.fromEntries(withoutMountPoints(daemon)));
    // Entry order is dockerd's walk order: by name.
    const names = [...withoutMountPoints(ours).keys()];
    expect(names).toEqual([...withoutMountPoints(daemon).keys()]);
    expect(await sandbox.cli('export', 'no-such-container')).toMatchObject({ code: 1, stderr: 'Error response from daemon: No such container: no-such-container\n' });
  }, 60_000);

  test('docker history: the same rows as dockerd for busybox:local and for an image both pulled from the registry (IDs below the top row: <missing>)', async () => {
    const format = ['history', '--no-trunc', '--human=false', '--format', '{{.ID}}|{{.CreatedAt}}|{{.CreatedBy}}|{{.Size}}|{{.Comment}}'];
    const rows = (r: CliResult | ProgramResult) => r.stdout.trim().split('\n').map((l, i) => (i === 0 ? l : l.replace(/^sha256:[0-9a-f]{64}\|/, '<missing>|')));
    expect(rows(await sandbox.cli(...format, 'busybox:local'))).toEqual(rows(await cli.docker([...format, 'busybox:local'])));

    const name = `dg-history-${process.pid}`;
    const image = `${registry.host}/alice/history:1`;
    expectSuccess(await cli.docker(['run', '--name', name, '--network', 'none', 'busybox:local', 'sh', '-c', 'echo data > /x; ln -s /x /y']));
    daemonContainers.push(name);
    expectSuccess(await cli.docker(['commit', '-m', 'a message', '-c', 'CMD ["cat", "/x"]', name, image]));
    daemonImages.push(image);
    expectSuccess(await cli.docker(['push', image], { timeoutMs: 60_000 }));
    expectSuccess(await sandbox.cli('pull', image));
    const theirs = rows(await cli.docker([...format, image]));
    expect(theirs).toHaveLength(2);
    expect(rows(await sandbox.cli(...format, image))).toEqual(theirs);
    expect(await sandbox.cli('history', 'nope:1')).toMatchObject({ code: 1, stderr: 'Error response from daemon: No such image: nope:1\n' });
  }, 90_000);

  test('docker push through the token service: layers Pushed, the digest line; dockerd pulls it and runs it with the same output', async () => {
    const image = `${registry.host}/alice/sandboxed:1`;
    expectSuccess(await sandbox.cli('tag', 'busybox', image));
    const push = await sandbox.cli('push', image);
    expectSuccess(push);
    const lines = push.stdout.trim().split('\n');
    expect(lines[0]).toBe(`The push refers to repository [${registry.host}/alice/sandboxed]`);
    expect(lines).toContainEqual(expect.stringMatching(/^[0-9a-f]{12}: Pushed$/));
    expect(lines.at(-1)).toMatch(/^1: digest: sha256:[0-9a-f]{64} size: \d+$/);
    daemonImages.push(image);
    expectSuccess(await cli.docker(['pull', image], { timeoutMs: 60_000 }));
    const script = 'echo ran; ls /bin | wc -l; id -u; cat /etc/passwd | head -1';
    const there = await cli.docker(['run', '--rm', '--network', 'none', image, 'sh', '-c', script]);
    const here = await sandbox.cli('run', '--rm', '--network', 'none', image, 'sh', '-c', script);
    expectSuccess(there);
    expect(there.stdout).toBe(here.stdout);
    expect((await cli.docker(['image', 'inspect', '--format', '{{.Id}}', image])).stdout.trim())
      .toBe((await sandbox.cli('image', 'inspect', '--format', '{{.Id}}', image)).stdout.trim());

    // As dockerd, the pushed manifest's digest joins the image's RepoDigests.
    const digest = /digest: (sha256:[0-9a-f]{64})/.exec(lines.at(-1) ?? '')?.[1];
    expect(JSON.parse((await sandbox.cli('image', 'inspect', '--format', '{{json .RepoDigests}}', image)).stdout)).toContain(`${registry.host}/alice/sandboxed@${digest}`);
    const again = await sandbox.cli('push', image);
    expectSuccess(again);
    expect(again.stdout).toMatch(/^[0-9a-f]{12}: Layer already exists$/m);
    expect(again.stdout.trim().split('\n').at(-1)).toBe(lines.at(-1));
  }, 120_000);

  test('a push to another repository of the same registry mounts the layers it holds (Mounted from <repository>), as dockerd', async () => {
    const image = `${registry.host}/alice/mounted:1`;
    expectSuccess(await sandbox.cli('tag', 'busybox', image));
    const push = await sandbox.cli('push', image);
    expectSuccess(push);
    expect(push.stdout).toMatch(/^[0-9a-f]{12}: Mounted from alice\/sandboxed$/m);
    // A pulled image's layers are known by the blobs it was pulled as: mounted from where it came.
    const pulled = `${registry.host}/alice/history:1`;
    const copy = `${registry.host}/alice/history-copy:1`;
    expectSuccess(await sandbox.cli('tag', pulled, copy));
    const second = await sandbox.cli('push', copy);
    expectSuccess(second);
    expect(second.stdout.match(/: Mounted from alice\/history$/gm)).toHaveLength(2);
  }, 120_000);

  test('a push to a repository alice may not write, or without credentials, ends with the words dockerd ends the same push with', async () => {
    const denied = `${registry.host}/bob/x:1`;
    expectSuccess(await cli.docker(['tag', 'busybox:local', denied]));
    daemonImages.push(denied);
    expectSuccess(await sandbox.cli('tag', 'busybox:local', denied));
    const theirs = await cli.docker(['push', denied], { timeoutMs: 60_000 });
    const ours = await sandbox.cli('push', denied);
    expect(theirs.code).not.toBe(0);
    expect(ours.code).toBe(theirs.code);
    expect(lastLine(ours)).toBe(lastLine(theirs));

    const nobody = `${registry.host}/alice/anonymous:1`;
    expectSuccess(await anonymous.docker(['tag', 'busybox:local', nobody]));
    daemonImages.push(nobody);
    const theirsAnonymous = await anonymous.docker(['push', nobody], { timeoutMs: 60_000 });
    expectSuccess(await sandbox.cli('tag', 'busybox:local', nobody));
    expectSuccess(await sandbox.cli('logout', registry.host));
    const oursAnonymous = await sandbox.cli('push', nobody);
    expectSuccess(await sandbox.cliWithInput(Buffer.from(PASSWORD), 'login', registry.host, '-u', 'alice', '--password-stdin'));
    expect(theirsAnonymous.code).not.toBe(0);
    expect(oursAnonymous.code).toBe(theirsAnonymous.code);
    expect(lastLine(oursAnonymous)).toBe(lastLine(theirsAnonymous));
  }, 120_000);

  test('the store\'s push progress (each connection checked, as a tenant\'s): Preparing for every layer newest first, Waiting beyond five, Pushing with byte counts, Pushed, then the digest and aux lines', async () => {
    const store = await ImageStore.open(join(work, 'store'));
    const layers = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => tarOf([{ name: `f${i}`, content: `layer ${i}\n`.repeat(100) }])));
    await text(await store.load(Readable.from([await archiveOf(layers, `${registry.host}/alice/six:1`)])));
    const registryAuth = Buffer.from(JSON.stringify({ username: 'alice', password: PASSWORD })).toString('base64url');
    // Pushed as a tenant's push is: every connection (registry, token realm) through the connect check.
    const asked = new Set<string>();
    const connectCheck = ({ host, port }: { host: string; port: number }) => void asked.add(`${host}:${port}`);
    const messages = (await text(await store.push({ name: `${registry.host}/alice/six`, tag: '1', registryAuth, connectCheck })))
      .trim().split('\n').map((l) => JSON.parse(l) as { status?: string; id?: string; progressDetail?: { current?: number; total?: number }; aux?: Record<string, unknown>; error?: string });
    expect(messages.find((m) => m.error)).toBeUndefined();
    const ids = layers.map((l) => sha256Of(l).slice(7, 19)).reverse();
    expect(messages[0]).toEqual({ status: `The push refers to repository [${registry.host}/alice/six]` });
    expect(messages.slice(1, 7)).toEqual(ids.map((id) => ({ status: 'Preparing', progressDetail: {}, id })));
    expect(messages[7]).toEqual({ status: 'Waiting', progressDetail: {}, id: ids[5] });
    for (const id of ids) {
      expect(messages).toContainEqual({ status: 'Pushing', progressDetail: { current: expect.any(Number), total: expect.any(Number) }, id });
      expect(messages).toContainEqual({ status: 'Pushed', progressDetail: {}, id });
    }
    const [digestLine, aux] = messages.slice(-2);
    const digest = /^1: digest: (sha256:[0-9a-f]{64}) size: (\d+)$/.exec(digestLine?.status ?? '');
    expect(aux).toEqual({ progressDetail: {}, aux: { Tag: '1', Digest: digest?.[1], Size: Number(digest?.[2]) } });
    expect(asked).toContain(registry.host);
    // dockerd pulls what the store pushed, with the same image ID.
    const pulled = await cli.docker(['pull', `${registry.host}/alice/six:1`], { timeoutMs: 60_000 });
    expectSuccess(pulled);
    daemonImages.push(`${registry.host}/alice/six:1`);
    expect((await cli.docker(['image', 'inspect', '--format', '{{.Id}}', `${registry.host}/alice/six:1`])).stdout.trim()).toBe((await store.inspect(`${registry.host}/alice/six:1`)).Id);
  }, 120_000);

  test('a push of an image the sandbox does not have: dockerd\'s words (as a 404 before the stream, where dockerd writes them in it)', async () => {
    const missing = `${registry.host}/alice/missing:1`;
    const theirs = await cli.docker(['push', missing]);
    const ours = await sandbox.cli('push', missing);
    expect(ours.code).toBe(theirs.code);
    expect(lastLine(ours)).toBe(`Error response from daemon: ${lastLine(theirs)}`);
  });
});
