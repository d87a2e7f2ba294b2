import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { LayerBlobs } from '../../../lib/engine/images/store/layer-blobs.js';
import { layerContentSize } from '../../../lib/engine/images/store/layer-content-size.js';
import { sha256Of } from '../../../lib/engine/images/store/digest.js';
import { collect, tarOf } from './tar-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'dockgate-layer-blobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function layer(name: string, content: string): Promise<{ diffId: string; file: string; tar: Buffer }> {
  const tar = await tarOf([{ name: 'd/' }, { name: 'd/f', content }, { name: 'd/l', type: 'symlink', linkname: '/d/f' }]);
  const file = join(dir, name);
  writeFileSync(file, tar);
  return { diffId: sha256Of(tar), file, tar };
}

describe('a layer pushed without a blob of its own gets one gzip, made once while it streams and kept', () => {
  test('the stream is the gzip of the tar; its digest and size are recorded with the file; a second store of the same tar makes the same bytes', async () => {
    const { diffId, file, tar } = await layer('a.tar', 'x'.repeat(12_000));
    const blobs = new LayerBlobs(dir);
    let read = 0;
    const { stream, done } = blobs.compress(diffId, file, (n) => (read = n));
    const sent = await collect(stream);
    const blob = await done;
    expect(gunzipSync(sent).equals(tar)).toBe(true);
    expect(blob).toEqual({ digest: sha256Of(sent), size: sent.length, mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip' });
    expect(read).toBe(tar.length);
    expect(await blobs.ownBlob(diffId)).toEqual({ ...blob, file: blobs.gzipFile(diffId) });
    expect(readFileSync(blobs.gzipFile(diffId)).equals(sent)).toBe(true);
    // Deterministic: no name or time in the gzip header, so another store sends the same digest.
    const other = mkdtempSync(join(tmpdir(), 'dockgate-layer-blobs-2-'));
    const again = new LayerBlobs(other).compress(diffId, file, () => undefined);
    await collect(again.stream);
    expect((await again.done).digest).toBe(blob.digest);
    rmSync(other, { recursive: true, force: true });
  });

  test('a failed read keeps nothing: no blob file, no record', async () => {
    const blobs = new LayerBlobs(dir);
    const diffId = sha256Of('missing');
    const { stream, done } = blobs.compress(diffId, join(dir, 'no-such.tar'), () => undefined);
    await expect(collect(stream)).rejects.toThrow();
    await expect(done).rejects.toThrow();
    expect(existsSync(blobs.gzipFile(diffId))).toBe(false);
    expect(await blobs.known(diffId)).toEqual([]);
  });
});

describe('the blobs known for a layer say which repositories hold them (pulled from, pushed to)', () => {
  test('remember merges repositories per digest, most recent first; forget drops the record and the kept gzip', async () => {
    const { diffId, file } = await layer('b.tar', 'y');
    const blobs = new LayerBlobs(dir);
    const blob = { digest: sha256Of('compressed'), size: 10, mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip' };
    await blobs.remember(diffId, blob, '127.0.0.1:5000/alice/x');
    await blobs.remember(diffId, blob, '127.0.0.1:5000/alice/y');
    await blobs.remember(diffId, blob, '127.0.0.1:5000/alice/x');
    expect(await blobs.known(diffId)).toEqual([{ ...blob, repositories: ['127.0.0.1:5000/alice/x', '127.0.0.1:5000/alice/y'] }]);
    const own = blobs.compress(diffId, file, () => undefined);
    await collect(own.stream);
    await own.done;
    expect((await blobs.known(diffId)).map((b) => b.digest)).toEqual([(await own.done).digest, blob.digest]);
    await blobs.forget(diffId);
    expect(await blobs.known(diffId)).toEqual([]);
    expect(existsSync(blobs.gzipFile(diffId))).toBe(false);
  });
});

describe('a layer\'s size is dockerd\'s DiffSize: its files\' bytes, a symlink counting its target, whiteouts nothing', () => {
  test('file bytes plus symlink target lengths, not the tar\'s length; read once, then from the kept count', async () => {
    const tar = await tarOf([{ name: 'd/' }, { name: 'd/f', content: 'hello' }, { name: 'd/l', type: 'symlink', linkname: '/d/f' }, { name: 'd/.wh.gone', content: '' }]);
    const file = join(dir, 'c.tar');
    writeFileSync(file, tar);
    const cache = join(dir, 'c.size');
    expect(await layerContentSize(file, cache)).toBe(5 + 4);
    expect(readFileSync(cache, 'utf8')).toBe('9');
    writeFileSync(cache, '42');
    expect(await layerContentSize(file, cache)).toBe(42);
  });
});
