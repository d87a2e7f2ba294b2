import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyLayer } from '../../../lib/engine/images/store/apply-layer.js';
import { streamOf, tarOf, type Member } from './tar-fixture.js';

let root: string;
let outside: string;
beforeEach(async () => {
  outside = await mkdtemp(join(tmpdir(), 'dockgate-layer-'));
  root = join(outside, 'root');
  await applyLayer(outside, streamOf(await tarOf([{ name: 'root/' }])));
});
afterEach(async () => {
  await rm(outside, { recursive: true, force: true });
});

const apply = async (members: Member[]) => applyLayer(root, streamOf(await tarOf(members)));

describe('a layer tar is unpacked onto the layers below it', () => {
  test('files and directories are created with their modes; a later layer replaces a file', async () => {
    await apply([{ name: 'etc/' }, { name: 'etc/motd', content: 'one' }, { name: 'bin/tool', content: '#!', mode: 0o755 }]);
    await apply([{ name: 'etc/motd', content: 'two' }]);
    expect(await readFile(join(root, 'etc/motd'), 'utf8')).toBe('two');
    expect(await readdir(join(root, 'bin'))).toEqual(['tool']);
  });
});

describe('OCI whiteouts: .wh.<name> hides a lower-layer entry', () => {
  test('a file and a whole directory are removed, and the whiteout itself is never written', async () => {
    await apply([{ name: 'a/keep', content: 'k' }, { name: 'a/gone', content: 'g' }, { name: 'd/x/y', content: 'y' }]);
    await apply([{ name: 'a/.wh.gone', content: '' }, { name: '.wh.d', content: '' }]);
    expect(await readdir(join(root, 'a'))).toEqual(['keep']);
    expect(existsSync(join(root, 'd'))).toBe(false);
  });
});

describe('OCI whiteouts: .wh..wh..opq makes a directory opaque', () => {
  test('lower-layer children go, children from the same layer stay whatever their order in the tar', async () => {
    await apply([{ name: 'etc/old1', content: '1' }, { name: 'etc/sub/old2', content: '2' }]);
    await apply([{ name: 'etc/new-before', content: 'b' }, { name: 'etc/.wh..wh..opq', content: '' }, { name: 'etc/sub2/new-after', content: 'a' }]);
    expect((await readdir(join(root, 'etc'))).sort()).toEqual(['new-before', 'sub2']);
    expect(await readdir(join(root, 'etc/sub2'))).toEqual(['new-after']);
  });
});

describe('no layer entry writes outside the root', () => {
  test('a member named with .. is refused', async () => {
    await expect(apply([{ name: '../escape', content: 'x' }])).rejects.toThrow(/leaves the root/);
    expect(existsSync(join(outside, 'escape'))).toBe(false);
  });

  test('a file under a symbolic link to an absolute path lands inside the root', async () => {
    await apply([{ name: 'link', type: 'symlink', linkname: outside }]);
    await apply([{ name: 'link/planted', content: 'x' }]);
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    expect(await readFile(join(root, outside, 'planted'), 'utf8')).toBe('x');
  });

  test('a file under a relative link climbing with .. stays inside the root', async () => {
    await apply([{ name: 'up', type: 'symlink', linkname: '../../..' }]);
    await apply([{ name: 'up/planted2', content: 'x' }]);
    expect(existsSync(join(outside, 'planted2'))).toBe(false);
    expect(await readFile(join(root, 'planted2'), 'utf8')).toBe('x');
  });
});
