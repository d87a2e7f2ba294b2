import { describe, expect, test } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamespaceReader as Compiled } from '../../../dist/engine/runtime/sandbox/userns/ns-reader.js';
import type { NamespaceReader } from '../../../lib/engine/runtime/sandbox/userns/ns-reader.js';
import type { RootlessUserns } from '../../../lib/engine/runtime/sandbox/userns/rootless-userns.js';
import type { LayerEntry } from '../../../lib/engine/images/image-store-types.js';

/**
 * The rootless server's in-namespace reader (ns-reader.ts), compiled (its child is dist's), with
 * nsenter replaced by a script that runs the command after `--` as is (the namespace itself is the
 * rootless pass's subject: spec/interop/engine-sandbox/build.spec.ts): what is checked here is
 * how the server holds the child and its output.
 */
const dir = mkdtempSync(join(tmpdir(), 'dockgate-ns-reader-'));
const pidFile = join(dir, 'child.pid');
const passThrough = join(dir, 'nsenter');
writeFileSync(passThrough, `#!/bin/sh\necho $$ > ${pidFile}\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`);
chmodSync(passThrough, 0o755);

function reader(nsenter: string): NamespaceReader {
  const ns = { tools: { nsenter }, size: 65536, file: async () => '/proc/self/ns/user', offsetOf: () => 0 } as unknown as RootlessUserns;
  return (Compiled as unknown as typeof import('../../../lib/engine/runtime/sandbox/userns/ns-reader.js').NamespaceReader).of(ns)!;
}

function rootfs(bigBytes: number): string {
  const root = mkdtempSync(join(dir, 'rootfs-'));
  writeFileSync(join(root, 'small'), 'small file\n');
  writeFileSync(join(root, 'big'), '');
  truncateSync(join(root, 'big'), bigBytes);
  return root;
}

const gone = async (pid: number): Promise<boolean> => {
  for (let i = 0; i < 50; i++) {
    if (!existsSync(`/proc/${pid}`) || /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

describe('the namespace reader streams each file of a layer through (never holds a whole file in memory)', () => {
  test('a file entry carries its content as a stream of exactly its size, not a body', async () => {
    const root = rootfs(8 * 1024 * 1024 + 5);
    const seen: { name: string; size?: number; body: boolean; read: number }[] = [];
    for await (const entry of reader(passThrough).layer(root, [{ Path: '/big', Kind: 1 }, { Path: '/small', Kind: 1 }], 0) as AsyncIterable<LayerEntry>) {
      let read = 0;
      for await (const chunk of entry.content ?? []) read += chunk.length;
      seen.push({ name: entry.header.name, size: entry.header.size, body: entry.body !== undefined, read });
    }
    expect(seen).toEqual([
      { name: 'big', size: 8 * 1024 * 1024 + 5, body: false, read: 8 * 1024 * 1024 + 5 },
      { name: 'small', size: 11, body: false, read: 11 },
    ]);
  });
});

describe('the namespace reader never leaves its child behind nor crashes the server', () => {
  test('a child that cannot be started rejects the read (ENOENT), it does not throw an unhandled error', async () => {
    const read = async (): Promise<void> => {
      for await (const entry of reader(join(dir, 'no-such-nsenter')).layer(rootfs(1), [{ Path: '/small', Kind: 1 }], 0)) void entry;
    };
    await expect(read()).rejects.toThrow(/ENOENT/);
  });

  test('a consumer that stops after the first entry (its content unread, a big file still to come) ends the child, which would otherwise wait on its output', async () => {
    const root = rootfs(256 * 1024 * 1024);
    for await (const entry of reader(passThrough).layer(root, [{ Path: '/small', Kind: 1 }, { Path: '/big', Kind: 1 }], 0)) {
      expect(entry.header.name).toBe('small');
      break;
    }
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });
});
