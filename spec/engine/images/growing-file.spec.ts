import { describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { GrowingFile } from '../../../lib/engine/images/store/growing-file.js';

const write = (w: Writable, chunk: Buffer) => new Promise<void>((resolve, reject) => w.write(chunk, (err) => (err ? reject(err) : resolve())));
async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of r) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('a layer tar being written is read while it grows: every byte in order, ending when the writer finishes and failing when it fails', () => {
  test('a reader started before the first write reads what the writer wrote, across the rename into place', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dockgate-growing-'));
    try {
      const file = new GrowingFile(join(dir, 'temp'), join(dir, 'final'));
      const writer = file.writer();
      const reading = readAll(file.reader());
      const parts = [randomBytes(700 * 1024), randomBytes(900 * 1024), randomBytes(3000)];
      for (const part of parts) await write(writer, part);
      await new Promise<void>((resolve) => writer.end(resolve));
      expect(Buffer.compare(await reading, Buffer.concat(parts))).toBe(0);
      // A reader that starts after the file was renamed into place reads the final one.
      await rename(join(dir, 'temp'), join(dir, 'final'));
      expect(Buffer.compare(await readAll(file.reader()), await readFile(join(dir, 'final')))).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a writer that fails (a download cut off) fails the reader with its error instead of ending it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dockgate-growing-'));
    try {
      const file = new GrowingFile(join(dir, 'temp'), join(dir, 'final'));
      const writer = file.writer();
      const reading = readAll(file.reader());
      await write(writer, randomBytes(2 * 1024 * 1024));
      writer.on('error', () => undefined); // the pipeline's own listener, in a pull
      writer.destroy(new Error('the registry went away'));
      await expect(reading).rejects.toThrow('the registry went away');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
