import { describe, test, expect } from '@jest/globals';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { extractContext } from '../../../lib/engine/build/context/extract-context.js';

type Entry = { name: string; type?: 'file' | 'directory' | 'symlink'; mode?: number; body?: string; linkname?: string; mtime?: Date };

async function tarOf(entries: Entry[]): Promise<Readable> {
  const p = pack();
  for (const e of entries) {
    await new Promise<void>((resolve, reject) => {
      const header = { name: e.name, type: e.type ?? 'file', mode: e.mode ?? 0o644, mtime: e.mtime ?? new Date('2020-01-02T03:04:05Z'), ...(e.linkname ? { linkname: e.linkname } : {}) };
      if ((e.type ?? 'file') === 'file') p.entry(header, Buffer.from(e.body ?? ''), (err) => (err ? reject(err) : resolve()));
      else p.entry(header, (err) => (err ? reject(err) : resolve()));
    });
  }
  p.finalize();
  return Readable.from(p as AsyncIterable<Buffer>);
}

describe('a build context is unpacked with its modes and times, and nothing is written outside it', () => {
  test('files keep their mode and mtime; directories are made as needed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await extractContext(root, await tarOf([{ name: 'bin/run.sh', mode: 0o755, body: 'echo\n' }, { name: 'a.txt', body: 'a' }]));
    expect(lstatSync(join(root, 'bin/run.sh')).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(root, 'a.txt')).mtime.toISOString()).toBe('2020-01-02T03:04:05.000Z');
  });
  test('an entry below a symbolic link planted earlier is refused, nothing written outside or through it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'dockgate-outside-'));
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await expect(extractContext(root, await tarOf([{ name: 'evil', type: 'symlink', linkname: outside }, { name: 'evil/pwned', body: 'x' }]))).rejects.toThrow(/evil\/pwned: the entry is below a symbolic link/);
    expect(existsSync(join(outside, 'pwned'))).toBe(false);
    expect(readlinkSync(join(root, 'evil'))).toBe(outside);
  });
  test('a later entry of a name replaces the earlier one: a file, and a directory made for an earlier entry\'s parent', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await extractContext(root, await tarOf([{ name: 'f', body: 'first' }, { name: 'f', body: 'second' }, { name: 'a/b', body: 'x' }, { name: 'a', body: 'now a file' }]));
    expect(readFileSync(join(root, 'f'), 'utf8')).toBe('second');
    expect(readFileSync(join(root, 'a'), 'utf8')).toBe('now a file');
  });
  test('`..` is refused; a `.wh.` name is an ordinary file (a context is not a layer)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await expect(extractContext(root, await tarOf([{ name: '../escape', body: 'x' }]))).rejects.toThrow(/leaves the root/);
    await extractContext(root, await tarOf([{ name: 'keep', body: 'k' }, { name: '.wh.keep', body: '' }]));
    expect(readFileSync(join(root, 'keep'), 'utf8')).toBe('k');
    expect(existsSync(join(root, '.wh.keep'))).toBe(true);
  });
});
