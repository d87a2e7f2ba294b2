/**
 * The image store against real peers: registry 2.8 trusting a dockgate token service, images
 * pushed there by dockerd, pulled through the store with the credentials the Docker CLI sends
 * (password and identity token), refusals compared word for word with what dockerd says, and
 * docker save/load tarballs exchanged with dockerd both ways.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import { ImageStore } from '../../../lib/engine/images/index.js';
import type { ConnectCheck } from '../../../lib/http/checked-fetch.js';
import { dockerCli, startTokenRegistry, type DockerCli, type ProgramResult, type RunningRegistry, type RunningTokenServer } from '../support/index.js';

const SERVICE = 'registry.dockgate.test';
const ISSUER = 'dockgate-images';
const PASSWORD = 'correct horse battery staple';

const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
function expectSuccess(r: ProgramResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}
const auth = (body: Record<string, string>) => Buffer.from(JSON.stringify(body)).toString('base64url');

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

/** dockerd's message for a refused `docker pull` (the CLI prints "Error response from daemon: …"). */
const daemonMessage = (r: ProgramResult) => r.stderr.trim().replace(/^Error response from daemon: /, '');

describeWithPeers('image store pulls from a registry through the token flow', [
  dockerd(), program('docker-registry', ['--version']), dockerImage('busybox:local'),
], () => {
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  let cli: DockerCli;
  let anonymousCli: DockerCli;
  let dir: string;
  let image: string;
  let pushedDigest: string;
  const tagged: string[] = [];

  beforeAll(async () => {
    ({ token, registry } = await startTokenRegistry({ issuer: ISSUER, service: SERVICE, password: PASSWORD }));
    cli = await dockerCli();
    anonymousCli = await dockerCli();
    dir = await mkdtemp(join(tmpdir(), 'dockgate-pull-'));
    image = `${registry.host}/alice/x:1`;
    // A second layer with a whiteout (/bin/ls removed) and a CMD of its own, made by dockerd.
    const container = `dockgate-images-${process.pid}`;
    expectSuccess(await cli.docker(['run', '--name', container, 'busybox:local', 'sh', '-c', 'rm /bin/ls && echo pulled > /hello']));
    expectSuccess(await cli.docker(['commit', '--change', 'CMD ["cat", "/hello"]', '--change', 'ENV GREETING=hi', '--change', 'WORKDIR /tmp', container, image]));
    tagged.push(image);
    await cli.docker(['rm', container]);
    expectSuccess(await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: PASSWORD }));
    const push = await cli.docker(['push', image], { timeoutMs: 60_000 });
    expectSuccess(push);
    pushedDigest = /digest: (sha256:[0-9a-f]{64})/.exec(push.stdout)?.[1] as string;
  }, 120_000);

  afterAll(async () => {
    for (const ref of tagged) await cli?.docker(['rmi', '--force', ref]);
    await cli?.dispose();
    await anonymousCli?.dispose();
    await registry?.stop();
    await token?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a pull with the password streams dockerd\'s progress and yields the pushed image: same ID, CMD, ENV, files and whiteout', async () => {
    const store = await ImageStore.open(join(dir, 'password'));
    const progress = (await text(await store.pull({ ref: image, registryAuth: auth({ username: 'alice', password: PASSWORD, serveraddress: registry.host }) })))
      .trim().split('\n').map((l) => JSON.parse(l) as { status?: string; error?: string; progressDetail?: { current?: number; total?: number } });
    expect(progress.find((p) => p.error)).toBeUndefined();
    const statuses = progress.map((p) => p.status);
    expect(statuses[0]).toBe('Pulling from alice/x');
    for (const s of ['Pulling fs layer', 'Downloading', 'Download complete', 'Extracting', 'Pull complete']) expect(statuses).toContain(s);
    expect(progress.find((p) => p.status === 'Downloading')?.progressDetail).toEqual({ current: expect.any(Number), total: expect.any(Number) });
    expect(statuses.slice(-2)).toEqual([`Digest: ${pushedDigest}`, `Status: Downloaded newer image for ${image}`]);

    const daemon = JSON.parse((await cli.docker(['image', 'inspect', image])).stdout)[0] as { Id: string; Config: { Cmd: string[]; Env: string[]; WorkingDir: string } };
    const resolved = await store.resolve(image);
    expect(resolved?.id).toBe(daemon.Id);
    expect(resolved?.config.config).toMatchObject({ Cmd: ['cat', '/hello'], Env: daemon.Config.Env, WorkingDir: '/tmp' });
    expect(await readFile(join(resolved?.rootfs as string, 'hello'), 'utf8')).toBe('pulled\n');
    expect(existsSync(join(resolved?.rootfs as string, 'bin/sh'))).toBe(true);
    expect(existsSync(join(resolved?.rootfs as string, 'bin/ls'))).toBe(false);
    expect((await store.inspect(image)).RepoDigests).toEqual([`${registry.host}/alice/x@${pushedDigest}`]);

    const again = await text(await store.pull({ ref: image, registryAuth: auth({ username: 'alice', password: PASSWORD }) }));
    expect(again).toContain(`"status":"Status: Image is up to date for ${image}"`);
  }, 60_000);

  test('a pull whose every connection is checked (a tenant\'s) yields the same image; the check is asked for the registry and its token realm', async () => {
    const store = await ImageStore.open(join(dir, 'checked'));
    const asked = new Set<string>();
    const connectCheck: ConnectCheck = ({ host, port, address }) => {
      asked.add(`${host}:${port}`);
      return address === host || /^(127\.|::1$|::ffff:127\.)/.test(address) ? undefined : `unexpected address ${address}`;
    };
    const out = await text(await store.pull({ ref: image, connectCheck, registryAuth: auth({ username: 'alice', password: PASSWORD }) }));
    expect(out).not.toContain('"error"');
    expect((await store.resolve(image))?.id).toBe(JSON.parse((await cli.docker(['image', 'inspect', image])).stdout)[0].Id);
    expect(asked).toContain(registry.host);
    expect(asked).toContain(new URL(token.url).host);
    expect((await store.pull({ ref: image, connectCheck: () => 'refused', registryAuth: auth({ username: 'alice', password: PASSWORD }) }).then(text).catch((e: Error) => e.message))).toContain('refused');
  }, 60_000);

  test('a pull with docker login\'s identity token uses it as a refresh token (refresh_token grant)', async () => {
    const identitytoken = (await cli.readConfig()).auths?.[registry.host]?.identitytoken as string;
    expect(identitytoken).toBeTruthy();
    const store = await ImageStore.open(join(dir, 'identity'));
    const from = token.events.length;
    const out = await text(await store.pull({ ref: `${image.replace(':1', '')}@${pushedDigest}`, registryAuth: auth({ username: 'alice', identitytoken }) }));
    expect(out).not.toContain('"error"');
    expect(token.events.slice(from).filter((e) => e.type === 'token.issued')).toEqual([expect.objectContaining({ grant: 'refresh_token', account: 'alice', granted: 'repository:alice/x:pull' })]);
    expect((await store.list())[0]).toMatchObject({ RepoTags: [], RepoDigests: [`${registry.host}/alice/x@${pushedDigest}`] });
  });

  test('a pull without credentials is refused with the words dockerd uses for the same refusal', async () => {
    const store = await ImageStore.open(join(dir, 'anonymous'));
    const daemon = await anonymousCli.docker(['pull', image]);
    expect(daemon.code).not.toBe(0);
    await expect(store.pull({ ref: image })).rejects.toMatchObject({ status: 401, message: daemonMessage(daemon) });
  });

  test('a pull of a repository the user may not read is refused as dockerd refuses it (pull access denied)', async () => {
    const store = await ImageStore.open(join(dir, 'denied'));
    const other = `${registry.host}/bob/y:1`;
    const daemon = await cli.docker(['pull', other]);
    expect(daemonMessage(daemon)).toMatch(/^pull access denied for /);
    await expect(store.pull({ ref: other, registryAuth: auth({ username: 'alice', password: PASSWORD }) })).rejects.toMatchObject({ status: 404, message: daemonMessage(daemon) });
  });

  test('an unknown tag is refused with dockerd\'s "manifest unknown" message', async () => {
    const store = await ImageStore.open(join(dir, 'unknown'));
    const missing = `${registry.host}/alice/x:2`;
    const daemon = await cli.docker(['pull', missing]);
    expect(daemon.code).not.toBe(0);
    await expect(store.pull({ ref: missing, registryAuth: auth({ username: 'alice', password: PASSWORD }) })).rejects.toMatchObject({ status: 404, message: daemonMessage(daemon) });
  });

  test('docker save of the pulled image is read by dockerd\'s docker load, and dockerd\'s docker save by the store, with the same IDs', async () => {
    const store = await ImageStore.open(join(dir, 'password'));
    const id = (await store.resolve(image))?.id as string;
    const ours = join(dir, 'ours.tar');
    const saved = await store.save([image]);
    await writeFile(ours, saved);
    const copy = `${registry.host}/alice/x:saved`;
    await store.tag(image, `${registry.host}/alice/x`, 'saved');
    await writeFile(ours, await store.save([copy]));
    const loaded = await cli.docker(['load', '-i', ours]);
    expectSuccess(loaded);
    tagged.push(copy);
    expect(loaded.stdout).toContain(`Loaded image: ${copy}`);
    expect((await cli.docker(['image', 'inspect', '--format', '{{.Id}}', copy])).stdout.trim()).toBe(id);

    const theirs = join(dir, 'theirs.tar');
    expectSuccess(await cli.docker(['save', '-o', theirs, 'busybox:local']));
    const fresh = await ImageStore.open(join(dir, 'loaded'));
    expect(await text(await fresh.load(createReadStream(theirs)))).toBe(`${JSON.stringify({ stream: 'Loaded image: busybox:local\n' })}\r\n`);
    expect((await fresh.inspect('busybox:local')).Id).toBe((await cli.docker(['image', 'inspect', '--format', '{{.Id}}', 'busybox:local'])).stdout.trim());
  }, 60_000);

  test('a layer blob whose bytes do not match its digest (the same tar, another gzip header) fails the pull with dockerd\'s words and leaves no layer and no root, not even the one unpacked while it downloaded', async () => {
    const manifest = JSON.parse((await cli.docker(['manifest', 'inspect', '--insecure', image])).stdout) as { layers: { digest: string }[] };
    const blobFile = (digest: string) => join(registry.storageDir, 'docker/registry/v2/blobs/sha256', digest.slice(7, 9), digest.slice(7), 'data');
    const originals = new Map<string, Buffer>();
    for (const { digest } of manifest.layers) originals.set(digest, await readFile(blobFile(digest)));
    try {
      // Every layer keeps its tar and size (its diff ID matches, so it unpacks to its end): only the gzip header's OS byte differs.
      for (const [digest, bytes] of originals) await writeFile(blobFile(digest), Buffer.concat([bytes.subarray(0, 9), Buffer.from([bytes[9] === 3 ? 255 : 3]), bytes.subarray(10)]));
      const store = await ImageStore.open(join(dir, 'regzipped'));
      const lines = (await text(await store.pull({ ref: image, registryAuth: auth({ username: 'alice', password: PASSWORD }) }))).trim().split('\n').map((l) => JSON.parse(l) as { error?: string });
      const last = lines[lines.length - 1] as { error?: string };
      expect(last.error).toMatch(/^filesystem layer verification failed for digest sha256:[0-9a-f]{64}$/);
      expect(manifest.layers.map((l) => l.digest)).toContain(last.error?.split(' ').pop());
      expect(await store.list()).toEqual([]);
      expect((await readdir(join(dir, 'regzipped', 'layers')).catch(() => [])).filter((f) => f.endsWith('.tar'))).toEqual([]);
      expect(await readdir(join(dir, 'regzipped', 'rootfs')).catch(() => [])).toEqual([]);
    } finally {
      for (const [digest, bytes] of originals) await writeFile(blobFile(digest), bytes);
    }
  }, 60_000);

  test('a pull whose base layer is already stored unpacks its new layer while that layer downloads, and yields the image', async () => {
    const base = `${registry.host}/alice/base:1`;
    expectSuccess(await cli.docker(['tag', 'busybox:local', base]));
    tagged.push(base);
    expectSuccess(await cli.docker(['push', base], { timeoutMs: 60_000 }));
    const manifest = JSON.parse((await cli.docker(['manifest', 'inspect', '--insecure', image])).stdout) as { layers: { digest: string }[] };
    const fresh = manifest.layers[manifest.layers.length - 1]?.digest as string;
    // The new layer's body is held back, every byte of it, until the progress says it is being extracted.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const heldLink: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).endsWith(`/blobs/${fresh}`) || !res.body) return res;
      const bytes = new Uint8Array(await res.arrayBuffer());
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          await released;
          controller.enqueue(bytes);
          controller.close();
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const store = await ImageStore.open(join(dir, 'shared-base'), { fetch: heldLink });
    await text(await store.pull({ ref: base, registryAuth: auth({ username: 'alice', password: PASSWORD }) }));
    const statuses: string[] = [];
    let buffered = '';
    for await (const chunk of await store.pull({ ref: image, registryAuth: auth({ username: 'alice', password: PASSWORD }) })) {
      buffered += String(chunk);
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const event = JSON.parse(buffered.slice(0, nl)) as { status?: string; id?: string; error?: string };
        buffered = buffered.slice(nl + 1);
        statuses.push(`${event.status ?? event.error}${event.id ? ` ${event.id}` : ''}`);
        if (event.status === 'Extracting' && event.id === fresh.slice(7, 19)) release();
      }
    }
    const id = fresh.slice(7, 19);
    expect(statuses).toContain(`Already exists ${manifest.layers[0]?.digest.slice(7, 19)}`);
    expect(statuses.indexOf(`Extracting ${id}`)).toBeGreaterThanOrEqual(0);
    expect(statuses.indexOf(`Extracting ${id}`)).toBeLessThan(statuses.indexOf(`Download complete ${id}`));
    expect(statuses[statuses.length - 1]).toBe(`Status: Downloaded newer image for ${image}`);
    expect((await store.list()).map((i) => i.RepoTags).flat().sort()).toEqual([base, image].sort());
  }, 60_000);

  test('when one layer fails its digest, the downloads still under way are aborted and the failure is reported at once, as dockerd cancels them', async () => {
    const manifest = JSON.parse((await cli.docker(['manifest', 'inspect', '--insecure', image])).stdout) as { layers: { digest: string }[] };
    expect(manifest.layers.length).toBeGreaterThanOrEqual(2);
    const [stalled, broken] = manifest.layers.map((l) => l.digest) as [string, string];
    const blobFile = join(registry.storageDir, 'docker/registry/v2/blobs/sha256', broken.slice(7, 9), broken.slice(7), 'data');
    const original = await readFile(blobFile);
    // The registry is real; only the link to it is slow for one blob: its body sends its first bytes
    // and then nothing, until the request's signal aborts it (what an aborted download looks like).
    let aborted = false;
    const slowLink: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).endsWith(`/blobs/${stalled}`) || !res.body) return res;
      const reader = res.body.getReader();
      const first = await reader.read();
      const signal = init?.signal;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (!first.done) controller.enqueue(first.value);
          signal?.addEventListener('abort', () => {
            aborted = true;
            reader.cancel().catch(() => undefined);
            controller.error(signal.reason);
          }, { once: true });
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    try {
      await writeFile(blobFile, Buffer.concat([original.subarray(0, 9), Buffer.from([original[9] === 3 ? 255 : 3]), original.subarray(10)]));
      const store = await ImageStore.open(join(dir, 'cancelled'), { fetch: slowLink });
      const lines = (await text(await store.pull({ ref: image, registryAuth: auth({ username: 'alice', password: PASSWORD }) }))).trim().split('\n').map((l) => JSON.parse(l) as { error?: string });
      expect(lines[lines.length - 1]?.error).toBe(`filesystem layer verification failed for digest ${broken}`);
      expect(aborted).toBe(true);
      expect(await store.list()).toEqual([]);
      expect((await readdir(join(dir, 'cancelled', 'layers')).catch(() => [])).filter((f) => !f.startsWith('.'))).toEqual([]);
    } finally {
      await writeFile(blobFile, original);
    }
  }, 30_000);

  test('a blob changed in the registry\'s storage is refused (digest mismatch), and nothing is stored', async () => {
    const daemon = JSON.parse((await cli.docker(['image', 'inspect', image])).stdout)[0] as { Id: string };
    const hex = daemon.Id.slice('sha256:'.length);
    const file = join(registry.storageDir, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data');
    const config = await readFile(file, 'utf8');
    await writeFile(file, config.replace('GREETING=hi', 'GREETING=ho'));
    const store = await ImageStore.open(join(dir, 'tampered'));
    await expect(store.pull({ ref: image, registryAuth: auth({ username: 'alice', password: PASSWORD }) })).rejects.toMatchObject({ message: expect.stringContaining('config digest mismatch') });
    expect(await store.list()).toEqual([]);
    expect(await readdir(join(dir, 'tampered', 'blobs', 'sha256'))).toEqual([]);
  });
});
