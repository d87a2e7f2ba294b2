import { Readable } from 'node:stream';
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
