import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildShiftedRootfs, METACOPY_OPTIONS } from '../../../lib/engine/images/store/shifted-rootfs.js';

const root = process.getuid?.() === 0;
const it = root ? test : test.skip;

/** An unpacked image root: files of two owners, a setuid and a setgid file, a link, a directory. */
function plainTree(): string {
  const plain = join(mkdtempSync(join(tmpdir(), 'dockgate-shift-')), 'plain');
  mkdirSync(join(plain, 'bin'), { recursive: true });
  mkdirSync(join(plain, 'home', 'user'), { recursive: true });
  writeFileSync(join(plain, 'bin', 'su'), 'su');
  chmodSync(join(plain, 'bin', 'su'), 0o4755);
  writeFileSync(join(plain, 'bin', 'wall'), 'wall');
  lchownSync(join(plain, 'bin', 'wall'), 0, 5);
  chmodSync(join(plain, 'bin', 'wall'), 0o2755);
  writeFileSync(join(plain, 'home', 'user', 'notes'), 'n');
  lchownSync(join(plain, 'home', 'user', 'notes'), 1000, 1000);
  lchownSync(join(plain, 'home', 'user'), 1000, 1000);
  symlinkSync('/etc/passwd', join(plain, 'home', 'user', 'link'));
  lchownSync(join(plain, 'home', 'user', 'link'), 1000, 1000);
  return plain;
}

describe('an image root shifted for a user namespace range keeps every owner moved by the range, and the setuid and setgid bits', () => {
  it('owners 0:0, 0:5 and 1000:1000 become 100000:100000, 100000:100005 and 101000:101000; links are shifted, not followed; su keeps 4755 and wall 2755', async () => {
    const plain = plainTree();
    const target = join(plain, '..', 'rootfs-100000.100000', 'x');
    await buildShiftedRootfs(plain, target, { uid: 100000, gid: 100000, size: 65536 });
    const owner = (rel: string): string => {
      const s = lstatSync(join(target, rel));
      return `${s.uid}:${s.gid}`;
    };
    expect(owner('')).toBe('100000:100000');
    expect(owner('bin/wall')).toBe('100000:100005');
    expect(owner('home/user')).toBe('101000:101000');
    expect(owner('home/user/notes')).toBe('101000:101000');
    expect(owner('home/user/link')).toBe('101000:101000');
    expect(lstatSync('/etc/passwd').uid).toBe(0);
    expect((lstatSync(join(target, 'bin', 'su')).mode & 0o7777).toString(8)).toBe('4755');
    expect((lstatSync(join(target, 'bin', 'wall')).mode & 0o7777).toString(8)).toBe('2755');
  });
  it('an owner beyond the range is refused, naming the file', async () => {
    const plain = plainTree();
    writeFileSync(join(plain, 'far'), 'x');
    lchownSync(join(plain, 'far'), 70000, 0);
    await expect(buildShiftedRootfs(plain, join(plain, '..', 'shifted'), { uid: 100000, gid: 100000, size: 65536 })).rejects.toThrow(/\/far is owned by 70000:0/);
  });
});

describe('on a root server a range\'s root is an overlay layer of the owners alone, stacked on the plain tree', () => {
  it('mounted as lowerdir=layer:plain it shows every owner shifted, the setuid bits and the plain files\' content, and the layer holds no file data', async () => {
    const plain = plainTree();
    writeFileSync(join(plain, 'big'), Buffer.alloc(4 * 1024 * 1024, 1));
    const target = join(plain, '..', 'rootfs-100000.100000', 'x');
    await buildShiftedRootfs(plain, target, { uid: 100000, gid: 100000, size: 65536 }, { layer: true });
    const layerBytes = Number(spawnSync('du', ['-sB1', target]).stdout.toString().split('\t')[0]);
    expect(layerBytes).toBeLessThan(256 * 1024);
    const view = mkdtempSync(join(tmpdir(), 'dockgate-shift-view-'));
    const [upper, work, merged] = ['upper', 'work', 'merged'].map((n) => join(view, n)) as [string, string, string];
    for (const dir of [upper, work, merged]) mkdirSync(dir);
    expect(spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${target}:${plain},upperdir=${upper},workdir=${work},${METACOPY_OPTIONS}`, merged]).status).toBe(0);
    try {
      const owner = (rel: string): string => {
        const s = lstatSync(join(merged, rel));
        return `${s.uid}:${s.gid}`;
      };
      // The view's root is the upper directory's (a container's is given the layer's root owner, overlay-rootfs.ts).
      expect(`${lstatSync(target).uid}:${lstatSync(target).gid}`).toBe('100000:100000');
      expect(owner('bin/wall')).toBe('100000:100005');
      expect(owner('home/user/notes')).toBe('101000:101000');
      expect(owner('home/user/link')).toBe('101000:101000');
      expect((lstatSync(join(merged, 'bin', 'su')).mode & 0o7777).toString(8)).toBe('4755');
      expect(readFileSync(join(merged, 'bin', 'su'), 'utf8')).toBe('su');
      expect(readFileSync(join(merged, 'big')).equals(Buffer.alloc(4 * 1024 * 1024, 1))).toBe(true);
    } finally {
      spawnSync('umount', [merged]);
    }
  });
});
