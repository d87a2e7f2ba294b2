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

describe('a context that ends right after its last entry\'s data is taken (the Docker CLI sends one for -f ../Dockerfile); one cut anywhere else is refused', () => {
  const whole = async (entries: Entry[]): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of await tarOf(entries)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const entries: Entry[] = [{ name: 'f', body: 'in the context\n' }, { name: '.dockerignore', body: '.dockerignore\n.dockerfile.abc\n' }];
  // Header and data of each: 512 + 512 for f, then 512 + the last file's 30 bytes of data.
  const end = 512 + 512 + 512 + '.dockerignore\n.dockerfile.abc\n'.length;

  test('without the last padding and the closing zero blocks, every file is there', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await extractContext(root, Readable.from([(await whole(entries)).subarray(0, end)]));
    expect(readFileSync(join(root, 'f'), 'utf8')).toBe('in the context\n');
    expect(readFileSync(join(root, '.dockerignore'), 'utf8')).toBe('.dockerignore\n.dockerfile.abc\n');
  });
  test('ending inside an earlier entry\'s padding is the same: the entries before it are whole', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await extractContext(root, Readable.from([(await whole(entries)).subarray(0, 512 + 100)]));
    expect(readFileSync(join(root, 'f'), 'utf8')).toBe('in the context\n');
  });
  test.each([['inside the last file\'s data', end - 1], ['inside a header', 512 + 512 + 100], ['right after a header whose data is missing', 512 + 512 + 512]])('cut %s: refused', async (_where, at) => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-ctx-'));
    await expect(extractContext(root, Readable.from([(await whole(entries)).subarray(0, at)]))).rejects.toThrow(/Unexpected end of data|Stream was destroyed/);
  });
});
