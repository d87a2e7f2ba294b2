import { createHash } from 'node:crypto';
import { pack, type Header as Headers } from 'tar-stream';

/** One layer entry: its tar header and, for a regular file, its content. */
export interface LayerEntry { header: Partial<Headers> & { name: string }; body?: Buffer }

async function tarOf(entries: readonly LayerEntry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const { header, body } of entries) {
    const full = { mtime: new Date(0), uid: 0, gid: 0, ...header };
    p.entry(full, body ?? Buffer.alloc(0));
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** A `docker save`-style archive of one image with one layer made of `entries`, tagged `tag`. */
export async function oneLayerArchive(tag: string, entries: readonly LayerEntry[]): Promise<Buffer> {
  const layer = await tarOf(entries);
  const diffId = `sha256:${createHash('sha256').update(layer).digest('hex')}`;
  const config = Buffer.from(JSON.stringify({
    architecture: 'amd64', os: 'linux', created: '2024-01-01T00:00:00Z',
    config: { Cmd: ['/bin/sh'] }, rootfs: { type: 'layers', diff_ids: [diffId] },
  }));
  const manifest = Buffer.from(JSON.stringify([{ Config: 'config.json', RepoTags: [tag], Layers: ['layer.tar'] }]));
  return tarOf([
    { header: { name: 'config.json', size: config.length }, body: config },
    { header: { name: 'layer.tar', size: layer.length }, body: layer },
    { header: { name: 'manifest.json', size: manifest.length }, body: manifest },
  ]);
}
