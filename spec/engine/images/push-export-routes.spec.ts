import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { extract } from 'tar-stream';
import { Readable } from 'node:stream';
import { testApp, testRuntime } from '../helpers.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';

const seeded = existsSync('/bin/busybox');
const describeSeeded = seeded ? describe : describe.skip;
if (!seeded) process.stderr.write('push/export/history route specs on the sandbox runtime skipped: /bin/busybox (busybox-static) is missing\n');

const auth = Buffer.from('{}').toString('base64url');

const binary = (res: unknown, done: (err: Error | null, body: unknown) => void): void => {
  const chunks: Buffer[] = [];
  const stream = res as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
};

/** The members of a tar: name, uid, gid, mode, size. */
async function members(tar: Buffer): Promise<{ name: string; uid: number; gid: number; type: string; size: number; linkname: string }[]> {
  const out: { name: string; uid: number; gid: number; type: string; size: number; linkname: string }[] = [];
  const ex = extract();
  ex.on('entry', (h, stream, next) => {
    out.push({ name: h.name, uid: h.uid ?? -1, gid: h.gid ?? -1, type: h.type ?? '', size: h.size ?? 0, linkname: h.linkname ?? '' });
    stream.on('end', next);
    stream.resume();
  });
  await new Promise<void>((resolve, reject) => {
    ex.on('finish', resolve);
    ex.on('error', reject);
    Readable.from([tar]).pipe(ex);
  });
  return out;
}

describe('a runtime without export or push answers 501 naming the feature', () => {
  const scripted = testApp(testRuntime().runtime, '1.24-1.43');
  const busybox = '/bin/busybox';
  const proc = processRuntime({ images: { 'busybox:local': { program: busybox } } });
  const processApp = testApp(proc, '1.24-1.43');
  afterAll(async () => proc.close?.());

  test('scripted and process runtimes: GET /containers/{id}/export is 501 "exporting containers (docker export) is not supported by the <name> runtime"', async () => {
    for (const [app, name] of [[scripted, 'scripted'], [processApp, 'process']] as const) {
      const res = await request(app).get('/v1.41/containers/anything/export');
      expect({ status: res.status, body: res.body }).toEqual({ status: 501, body: { message: `exporting containers (docker export) is not supported by the ${name} runtime` } });
    }
  });

  test('scripted and process runtimes: POST /images/{name}/push is 501 "pushing images is not supported by the <name> runtime"', async () => {
    for (const [app, name] of [[scripted, 'scripted'], [processApp, 'process']] as const) {
      const res = await request(app).post('/v1.41/images/127.0.0.1:5000/alice/x/push?tag=1').set('X-Registry-Auth', auth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 501, body: { message: `pushing images is not supported by the ${name} runtime` } });
    }
  });

  test('a bad repository name is a 400 in dockerd\'s words before the runtime is asked (dockerd itself answers 500)', async () => {
    const upper = await request(scripted).post('/v1.41/images/Bad/push?tag=1').set('X-Registry-Auth', auth);
    expect({ status: upper.status, body: upper.body }).toEqual({ status: 400, body: { message: 'invalid reference format: repository name must be lowercase' } });
    const tag = await request(scripted).post('/v1.41/images/alice/x/push?tag=a%20b').set('X-Registry-Auth', auth);
    expect({ status: tag.status, body: tag.body }).toEqual({ status: 400, body: { message: 'invalid tag format' } });
    const digest = await request(scripted).post(`/v1.41/images/alice/x@sha256:${'a'.repeat(64)}/push`).set('X-Registry-Auth', auth);
    expect({ status: digest.status, body: digest.body }).toEqual({ status: 400, body: { message: 'cannot push a digest reference' } });
  });
});

describeSeeded('the sandbox runtime pushes, exports and lists history through its image store', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-push-routes-'));
  const runtime = sandboxRuntime({ stateDir });
  const app = testApp(runtime, '1.24-1.43');
  afterAll(async () => {
    await runtime.close?.();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('push of an image the store does not have: 404 "An image does not exist locally with the tag: <repository>" (dockerd\'s words), nothing streamed', async () => {
    for (const path of ['127.0.0.1:5000/alice/nope/push?tag=1', '127.0.0.1:5000/alice/nope/push']) {
      const res = await request(app).post(`/v1.41/images/${path}`).set('X-Registry-Auth', auth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'An image does not exist locally with the tag: 127.0.0.1:5000/alice/nope' } });
    }
  });

  test('push without X-Registry-Auth: 400 "Bad parameters and missing X-Registry-Auth: EOF", as dockerd', async () => {
    expect((await request(app).post('/v1.41/images/busybox/tag?repo=127.0.0.1:5000/alice/bb&tag=1')).status).toBe(201);
    const res = await request(app).post('/v1.41/images/127.0.0.1:5000/alice/bb/push?tag=1');
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { message: 'Bad parameters and missing X-Registry-Auth: EOF' } });
  });

  test('push with an X-Registry-Auth that is not base64 JSON: 400 naming the header', async () => {
    const res = await request(app).post('/v1.41/images/127.0.0.1:5000/alice/bb/push?tag=1').set('X-Registry-Auth', '%%%');
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { message: 'invalid X-Registry-Auth header: not base64url-encoded JSON' } });
  });

  test('push to a registry nobody answers at: 200, the first line names the repository, then an errorDetail line (dockerd reports it in the stream)', async () => {
    expect((await request(app).post('/v1.41/images/busybox/tag?repo=127.0.0.1:9/alice/bb&tag=1')).status).toBe(201);
    const res = await request(app).post('/v1.41/images/127.0.0.1:9/alice/bb/push?tag=1').set('X-Registry-Auth', auth).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const lines = (res.body as Buffer).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ status: 'The push refers to repository [127.0.0.1:9/alice/bb]' });
    expect(lines[1]).toEqual({ status: 'Preparing', progressDetail: {}, id: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(lines.at(-1)).toEqual({ errorDetail: { message: expect.stringContaining('127.0.0.1:9') }, error: expect.stringContaining('127.0.0.1:9') });
  });

  test('history: newest first, the image ID on the top row, Created seconds, CreatedBy, Tags, Size (the layer\'s file bytes), Comment', async () => {
    const res = await request(app).get('/v1.41/images/busybox/history');
    expect(res.status).toBe(200);
    const inspect = (await request(app).get('/v1.41/images/busybox/json')).body as { Id: string; RepoTags: string[] };
    expect(res.body).toEqual([{ Id: inspect.Id, Created: expect.any(Number), CreatedBy: expect.stringContaining('busybox-static'), Tags: inspect.RepoTags, Size: expect.any(Number), Comment: '' }]);
  });

  test('history of an unknown image: 404 "No such image: <ref>"', async () => {
    const res = await request(app).get('/v1.41/images/nope:1/history');
    expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'No such image: nope:1' } });
  });

  test('export of an unknown container: 404 "No such container: <ref>"', async () => {
    const res = await request(app).get('/v1.41/containers/nope/export');
    expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: 'No such container: nope' } });
  });

  test('export of a created container: a tar of its filesystem, names relative without ./, sorted, /proc and /sys empty', async () => {
    const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['true'] });
    expect(created.status).toBe(201);
    const res = await request(app).get(`/v1.41/containers/${created.body.Id as string}/export`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-tar');
    const names = (await members(res.body as Buffer)).map((m) => m.name);
    expect(names).toContain('bin/');
    expect(names).toContain('bin/busybox');
    expect(names).toContain('etc/passwd');
    expect(names.filter((n) => n.startsWith('./') || n.startsWith('/'))).toEqual([]);
    expect(names.filter((n) => /^(proc|sys)\/./.test(n))).toEqual([]);
    expect(names).toEqual([...names].sort());
    // The one-layer image unchanged: history's Size is dockerd's DiffSize, the files' bytes (a
    // symlink counting its target), which is what the export holds; not the layer tar's length.
    const files = await members(res.body as Buffer);
    const bytes = files.reduce((sum, m) => sum + (m.type === 'file' ? m.size : m.type === 'symlink' ? Buffer.byteLength(m.linkname) : 0), 0);
    expect((await request(app).get('/v1.41/images/busybox/history')).body[0].Size).toBe(bytes);
  });
});
