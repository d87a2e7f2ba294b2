import { Readable } from 'node:stream';
import { sha256Of } from '../../../lib/engine/images/store/digest.js';
import { pack, type Header } from 'tar-stream';

/** One tar member for a test layer: a file with content, a directory, or a symbolic link. */
export type Member = { name: string; content?: string; type?: 'file' | 'directory' | 'symlink' | 'link'; linkname?: string; mode?: number };

/** A tar archive of `members`, in memory (test layers are a few hundred bytes). */
export async function tarOf(members: Member[]): Promise<Buffer> {
  const archive = pack();
  for (const m of members) {
    const type = m.type ?? (m.content !== undefined ? 'file' : 'directory');
    const header = { name: m.name, type, mode: m.mode ?? (type === 'directory' ? 0o755 : 0o644), mtime: new Date(0), ...(m.linkname ? { linkname: m.linkname } : {}) } as Header;
    await new Promise<void>((resolve, reject) => {
      if (type === 'file') archive.entry(header, m.content ?? '', (err) => (err ? reject(err) : resolve()));
      else archive.entry(header, (err) => (err ? reject(err) : resolve()));
    });
  }
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export const streamOf = (data: Buffer): Readable => Readable.from([data]);

export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** A docker-archive with one image of the given layers (tars), tagged `tag`. */
export async function archiveOf(layers: Buffer[], tag: string, diffIds = layers.map((l) => sha256Of(l))): Promise<Buffer> {
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['cat', '/f'], Env: ['A=1'], WorkingDir: '/w', User: '1000', ExposedPorts: { '80/tcp': {} }, Labels: { l: 'v' } }, rootfs: { type: 'layers', diff_ids: diffIds }, history: layers.map((_, i) => ({ created: '2024-05-01T00:00:00Z', created_by: `step ${i}` })) }));
  const files = [
    ...layers.map((l, i) => ({ name: `l${i}/layer.tar`, content: l.toString('latin1') })),
    { name: 'cfg.json', content: config.toString('latin1') },
    { name: 'manifest.json', content: JSON.stringify([{ Config: 'cfg.json', RepoTags: [tag], Layers: layers.map((_, i) => `l${i}/layer.tar`) }]) },
  ];
  // tarOf writes strings; latin1 keeps the bytes of binary members as they are.
  return tarOfBinary(files);
}

export async function tarOfBinary(files: { name: string; content: string }[]): Promise<Buffer> {
  const { pack } = await import('tar-stream');
  const p = pack();
  for (const f of files) await new Promise<void>((resolve, reject) => p.entry({ name: f.name }, Buffer.from(f.content, 'latin1'), (e) => (e ? reject(e) : resolve())));
  p.finalize();
  return collect(Readable.from(p as unknown as AsyncIterable<Buffer>));
}

