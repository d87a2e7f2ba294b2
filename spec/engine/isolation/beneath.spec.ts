import { afterAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Beneath } from '../../../lib/engine/linux/beneath.js';
import { copyBeneath } from '../../../lib/engine/linux/copy-beneath.js';

const base = mkdtempSync(join(tmpdir(), 'dockgate-beneath-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
/** A tree (what a container controls) and an outside file (the host's) it must never reach. */
function fixture() {
  const dir = join(base, String(n++));
  const tree = join(dir, 'tree');
  const outside = join(dir, 'outside');
  mkdirSync(tree, { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret'), 'host\n', { mode: 0o600 });
  return { tree, outside };
}

describe('no link is followed, at the last component or on the way', () => {
  test('reading a file that is a link to a host file is refused (ELOOP), the host file unread', async () => {
    const { tree, outside } = fixture();
    symlinkSync(join(outside, 'secret'), join(tree, 'passwd'));
    const root = await Beneath.open(tree);
    await expect(root.readFile('passwd', 1024)).rejects.toMatchObject({ code: 'ELOOP' });
    await root.close();
  });

  test('a directory on the way that is a link (etc -> /host) is refused, not resolved', async () => {
    const { tree, outside } = fixture();
    symlinkSync(outside, join(tree, 'etc'));
    const root = await Beneath.open(tree);
    await expect(root.readFile('/etc/secret', 1024)).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(root.writeFile('/etc/hosts', 'x')).rejects.toMatchObject({ code: 'ELOOP' });
    expect(() => statSync(join(outside, 'hosts'))).toThrow();
    await root.close();
  });

  test('writing over a link replaces the link and leaves its target as it was', async () => {
    const { tree, outside } = fixture();
    symlinkSync(join(outside, 'secret'), join(tree, 'hosts'));
    const root = await Beneath.open(tree);
    await root.writeFile('hosts', '127.0.0.1 localhost\n', { mode: 0o644 });
    await root.close();
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('host\n');
    expect(lstatSync(join(tree, 'hosts')).isFile()).toBe(true);
    expect(readFileSync(join(tree, 'hosts'), 'utf8')).toBe('127.0.0.1 localhost\n');
  });

  test('".." is refused', async () => {
    const { tree } = fixture();
    const root = await Beneath.open(tree);
    await expect(root.readFile('../outside/secret', 1024)).rejects.toMatchObject({ code: 'EINVAL' });
    await root.close();
  });

  test('a directory swapped for a link after it was opened still names the directory that was opened', async () => {
    const { tree, outside } = fixture();
    mkdirSync(join(tree, 'etc'));
    const root = await Beneath.open(tree);
    const etc = await root.dir('etc');
    execFileSync('mv', [join(tree, 'etc'), join(tree, 'old')]);
    symlinkSync(outside, join(tree, 'etc'));
    await etc.writeFile('hosts', 'x');
    await etc.close();
    await root.close();
    expect(readFileSync(join(tree, 'old', 'hosts'), 'utf8')).toBe('x');
    expect(() => statSync(join(outside, 'hosts'))).toThrow();
  });
  test('lstatChild describes a link as a link (its target unread), and a missing name as undefined', async () => {
    const { tree, outside } = fixture();
    symlinkSync(outside, join(tree, 'd'));
    const root = await Beneath.open(tree);
    expect((await root.lstatChild('d'))?.isSymbolicLink()).toBe(true);
    await expect(root.lstatChild('missing')).resolves.toBeUndefined();
    expect(() => root.at('d/secret')).toThrow('is not a single path component');
    await root.close();
  });
});

describe('a FIFO, a device or an oversized file is refused without blocking', () => {
  test('reading a FIFO answers ENOTREG at once (nobody writes to it)', async () => {
    const { tree } = fixture();
    mkdirSync(join(tree, 'etc'));
    execFileSync('mkfifo', [join(tree, 'etc', 'passwd')]);
    const root = await Beneath.open(tree);
    await expect(root.readFile('/etc/passwd', 1 << 20)).rejects.toMatchObject({ code: 'ENOTREG' });
    await root.close();
  });

  test('reading /dev/zero through a tree that holds a device node is refused', async () => {
    const { tree } = fixture();
    execFileSync('mknod', [join(tree, 'zero'), 'c', '1', '5']);
    const root = await Beneath.open(tree);
    await expect(root.readFile('zero', 1 << 20)).rejects.toMatchObject({ code: 'ENOTREG' });
    await root.close();
  });

  test('a file over the cap is refused (EFBIG); a missing file is undefined', async () => {
    const { tree } = fixture();
    writeFileSync(join(tree, 'big'), Buffer.alloc(4096));
    const root = await Beneath.open(tree);
    await expect(root.readFile('big', 1024)).rejects.toMatchObject({ code: 'EFBIG' });
    await expect(root.readFile('missing', 1024)).resolves.toBeUndefined();
    expect((await root.readFile('big', 4096))?.length).toBe(4096);
    await root.close();
  });
});

describe('copyBeneath copies a tree with owners, modes and links, and never writes through the destination', () => {
  test('owners, modes, links and nested directories are kept', async () => {
    const { tree } = fixture();
    const dest = join(tree, '..', 'dest');
    mkdirSync(dest);
    mkdirSync(join(tree, 'a', 'b'), { recursive: true });
    writeFileSync(join(tree, 'a', 'b', 'f'), 'data', { mode: 0o640 });
    execFileSync('chown', ['-h', '1234:5678', join(tree, 'a', 'b', 'f')]);
    execFileSync('chmod', ['0710', join(tree, 'a')]);
    symlinkSync('/etc/passwd', join(tree, 'link'));
    const [from, to] = [await Beneath.open(tree), await Beneath.open(dest)];
    const report = await copyBeneath(from, to);
    await Promise.all([from.close(), to.close()]);
    expect(report.skipped).toEqual([]);
    const f = statSync(join(dest, 'a', 'b', 'f'));
    expect({ uid: f.uid, gid: f.gid, mode: f.mode & 0o7777, text: readFileSync(join(dest, 'a', 'b', 'f'), 'utf8') }).toEqual({ uid: 1234, gid: 5678, mode: 0o640, text: 'data' });
    expect(statSync(join(dest, 'a')).mode & 0o7777).toBe(0o710);
    expect(readlinkSync(join(dest, 'link'))).toBe('/etc/passwd');
  });

  test('a link planted in the destination under a name the copy writes makes the copy fail; the host file is untouched', async () => {
    const { tree, outside } = fixture();
    const dest = join(tree, '..', 'dest');
    mkdirSync(dest);
    writeFileSync(join(tree, 'f'), 'from the image');
    symlinkSync(join(outside, 'secret'), join(dest, 'f'));
    const [from, to] = [await Beneath.open(tree), await Beneath.open(dest)];
    await expect(copyBeneath(from, to)).rejects.toMatchObject({ code: 'EEXIST' });
    await Promise.all([from.close(), to.close()]);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('host\n');
    expect(statSync(join(outside, 'secret')).uid).toBe(process.getuid?.());
  });

  test('a planted directory link is refused, nothing written below its target', async () => {
    const { tree, outside } = fixture();
    const dest = join(tree, '..', 'dest');
    mkdirSync(dest);
    mkdirSync(join(tree, 'd'));
    writeFileSync(join(tree, 'd', 'x'), 'x');
    symlinkSync(outside, join(dest, 'd'));
    const [from, to] = [await Beneath.open(tree), await Beneath.open(dest)];
    await expect(copyBeneath(from, to)).rejects.toMatchObject({ code: 'ELOOP' });
    await Promise.all([from.close(), to.close()]);
    expect(() => statSync(join(outside, 'x'))).toThrow();
  });
});

describe('resolve reads links inside the tree as a chroot would, never the host\'s', () => {
  test('absolute and relative links, ".." never above the root, missing components kept, a file in the way kept', async () => {
    const { tree } = fixture();
    mkdirSync(join(tree, 'usr', 'lib'), { recursive: true });
    writeFileSync(join(tree, 'usr', 'file'), '');
    symlinkSync('/usr/lib', join(tree, 'abs'));
    symlinkSync('usr/lib', join(tree, 'rel'));
    symlinkSync('../../../etc', join(tree, 'usr', 'up'));
    const root = await Beneath.open(tree);
    expect(await root.resolve('/abs/x')).toBe('usr/lib/x');
    expect(await root.resolve('rel/../file')).toBe('usr/file');
    expect(await root.resolve('usr/up/passwd')).toBe('etc/passwd');
    expect(await root.resolve('/missing/../usr/lib/y')).toBe('usr/lib/y');
    expect(await root.resolve('usr/file/z')).toBe('usr/file/z');
    expect(await root.resolve('abs')).toBe('usr/lib');
    await root.close();
  });
});
