import { describe, test, expect } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inUserNamespace, stageSources, stagingTable, STAGE_DIR } from '../../../lib/engine/runtime/sandbox/userns/enter.js';
import { checkIdRange, DEFAULT_ID_RANGE, idMapAt, idMapCount, subordinateIdRange } from '../../../lib/engine/runtime/sandbox/userns/id-map.js';
import { OwnerRanges } from '../../../lib/engine/runtime/sandbox/userns/owner-ranges.js';

const TOOLS = { unshare: '/usr/bin/unshare', nsenter: '/usr/bin/nsenter', setpriv: '/usr/bin/setpriv', file: '/proc/1/fd/9', gid: 100000, uid: 100000 };

describe('the server\'s range comes from /etc/subuid and /etc/subgid\'s root entry, else 100000-6653599, and is cut into owners\' ranges of 65536 ids', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-subid-'));
  const files = (uid: string, gid: string): [string, string] => {
    writeFileSync(join(dir, 'subuid'), uid);
    writeFileSync(join(dir, 'subgid'), gid);
    return [join(dir, 'subuid'), join(dir, 'subgid')];
  };
  test('root\'s entries give the range (the smaller count of the two)', () => {
    expect(subordinateIdRange(...files('alice:100000:65536\nroot:200000:1000000\n', 'root:300000:65536\n'))).toEqual({ uid: 200000, gid: 300000, size: 65536 });
    expect(subordinateIdRange(...files('root:200000:1000000\n', '0:300000:6553600\n'))).toEqual({ uid: 200000, gid: 300000, size: 1000000 });
  });
  test('no root entry (or no file) gives 100000-6653599, 100 ranges', () => {
    expect(subordinateIdRange(...files('alice:100000:65536\n', 'alice:100000:65536\n'))).toEqual(DEFAULT_ID_RANGE);
    expect(subordinateIdRange(join(dir, 'none'), join(dir, 'none'))).toEqual({ uid: 100000, gid: 100000, size: 6553600 });
    expect(idMapCount(DEFAULT_ID_RANGE)).toBe(100);
  });
  test('range n is host ids uid + n × 65536 on, 65536 of them; none beyond the range; a range under 65536 ids is one smaller range', () => {
    const range = { uid: 200000, gid: 300000, size: 1000000 };
    expect(idMapCount(range)).toBe(15);
    expect(idMapAt(range, 0)).toEqual({ uid: 200000, gid: 300000, size: 65536 });
    expect(idMapAt(range, 2)).toEqual({ uid: 200000 + 2 * 65536, gid: 300000 + 2 * 65536, size: 65536 });
    expect(idMapAt(range, 14)).toEqual({ uid: 200000 + 14 * 65536, gid: 300000 + 14 * 65536, size: 65536 });
    expect(idMapAt(range, 15)).toBeUndefined();
    expect(idMapAt({ uid: 300000, gid: 300000, size: 1000 }, 0)).toEqual({ uid: 300000, gid: 300000, size: 1000 });
    expect(idMapAt({ uid: 300000, gid: 300000, size: 1000 }, 1)).toBeUndefined();
  });
  test('a range given as the option is checked once: host id 0 or ids past 2^32 - 1 is a TypeError naming it', () => {
    expect(() => checkIdRange({ uid: 0, gid: 100000, size: 65536 }, 'userns')).toThrow(/option "userns"/);
    expect(() => checkIdRange({ uid: 100000, gid: 100000, size: 0xffffffff }, 'userns')).toThrow(TypeError);
    expect(checkIdRange({ uid: 300000, gid: 300000, size: 1000 }, 'userns')).toEqual({ uid: 300000, gid: 300000, size: 1000 });
    expect(checkIdRange({ uid: 100000, gid: 100000, size: 6553600 }, 'userns')).toEqual({ uid: 100000, gid: 100000, size: 6553600 });
  });
});

describe('owners get ranges in the order first seen, kept across restarts; containers without an owner keep range 0', () => {
  test('bob 1, carol 2, bob again 1; a new OwnerRanges on the same file gives the same', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dockgate-ranges-')), 'owner-ranges.json');
    const ranges = new OwnerRanges(file);
    expect([ranges.indexOf(undefined), ranges.indexOf('bob'), ranges.indexOf('carol'), ranges.indexOf('bob')]).toEqual([0, 1, 2, 1]);
    const again = new OwnerRanges(file);
    expect([again.indexOf('carol'), again.indexOf('bob'), again.indexOf('dave')]).toEqual([2, 1, 3]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ owners: ['bob', 'carol', 'dave'] });
  });
  test('a file that does not hold the owners is an error, never a fresh start (owners would move to other ranges)', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dockgate-ranges-')), 'owner-ranges.json');
    writeFileSync(file, '{"owners":["bob","bob"]}');
    expect(() => new OwnerRanges(file)).toThrow(/owners/);
  });
});

describe('a launcher binds bwrap\'s host paths in a private staging tmpfs, so the mapped ids need no way into the server\'s directories', () => {
  test('every bind source is replaced by a staged path, in order; a --setenv value that looks like an option is left alone', () => {
    const staged = stageSources(['--unshare-pid', '--bind', '/state/rootfs', '/', '--setenv', 'X', '--bind', '--ro-bind', '/host/dir', '/x', '--proc', '/proc']);
    expect(staged.sources).toEqual(['/state/rootfs', '/host/dir']);
    expect(staged.args).toEqual(['--unshare-pid', '--bind', `${STAGE_DIR}/0`, '/', '--setenv', 'X', '--bind', '--ro-bind', `${STAGE_DIR}/1`, '/x', '--proc', '/proc']);
  });
  test('the kernel\'s paths of the /proc protection (/dev/null, /proc/sys…), which any uid reaches, are bound as they are: no staging mount for them', () => {
    const staged = stageSources(['--bind', '/state/rootfs', '/', '--dev-bind', '/dev/null', '/proc/kcore', '--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind', '/proc/sysrq-trigger', '/proc/sysrq-trigger', '--ro-bind', '/proc/self', '/x']);
    expect(staged.sources).toEqual(['/state/rootfs', '/proc/self']);
    expect(staged.args).toEqual(['--bind', `${STAGE_DIR}/0`, '/', '--dev-bind', '/dev/null', '/proc/kcore', '--ro-bind', '/proc/sys', '/proc/sys',
      '--ro-bind', '/proc/sysrq-trigger', '/proc/sysrq-trigger', '--ro-bind', `${STAGE_DIR}/1`, '/x']);
  });
  test('the staged sources are bound by one mount -a over a table (a space, tab, newline or backslash in a path as its octal escape); held sources are left to a mount of their own', () => {
    expect(stagingTable(STAGE_DIR, ['/state/root fs', '/proc/42/fd/7', '/a\\b\tc\nd'])).toBe(
      `/state/root\\040fs ${STAGE_DIR}/0 none rbind,X-mount.mkdir 0 0\n`
      + `/a\\134b\\011c\\012d ${STAGE_DIR}/2 none rbind,X-mount.mkdir 0 0\n`,
    );
    const [, args] = inUserNamespace(TOOLS, 'bwrap', ['--bind', '/r', '/', '--ro-bind', '/proc/42/fd/7', '/held'], ['id'], { uid: 0, gid: 0 });
    const script = args[args.indexOf('-c') + 1]!;
    expect(script).not.toMatch(/(?<!\.)\bmkdir\b/);
    expect(script).toContain('mount -a -T');
    const after = args.slice(args.indexOf('sh', args.indexOf('-c')) + 1);
    // The directory, the table, the namespace file (none for root), the idmap helper, the file it
    // idmaps through and container root's host uid, then the sources and the held pairs.
    expect(after.slice(0, 11)).toEqual([STAGE_DIR, `/r ${STAGE_DIR}/0 none rbind,X-mount.mkdir 0 0\n`, '', '', TOOLS.file, String(TOOLS.uid), '2', '/r', '/proc/42/fd/7', '1', '/proc/42/fd/7']);
  });
  test('an option the launcher does not know is an error, never skipped', () => {
    expect(() => stageSources(['--new-option', 'x'])).toThrow(/--new-option is not known/);
  });
  test('root enters with nsenter as uid 0; another user through bwrap --userns with no capability', () => {
    const [program, rootArgs] = inUserNamespace(TOOLS, 'bwrap', ['--bind', '/r', '/', '--cap-drop', 'ALL', '--cap-add', 'CAP_CHOWN'], ['id'], { uid: 0, gid: 0 });
    expect(program).toBe('/usr/bin/unshare');
    expect(rootArgs.join(' ')).toContain(`/usr/bin/nsenter --user=/proc/1/fd/9 --setuid=0 --setgid=0 -- /usr/bin/setpriv --groups=0 -- bwrap --bind ${STAGE_DIR}/0 / --cap-drop ALL --cap-add CAP_CHOWN -- id`);
    const [, userArgs] = inUserNamespace(TOOLS, 'bwrap', ['--bind', '/r', '/', '--cap-drop', 'ALL', '--cap-add', 'CAP_CHOWN'], ['id'], { uid: 1000, gid: 0 });
    expect(userArgs.join(' ')).toContain(`/usr/bin/setpriv --regid=100000 --groups=100000 -- bwrap --userns 7 --uid 1000 --gid 0 --bind ${STAGE_DIR}/0 / --cap-drop ALL -- id`);
  });
});
