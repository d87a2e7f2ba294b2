import { describe, test, expect } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inUserNamespace, stageSources, STAGE_DIR } from '../../lib/engine/runtime/sandbox/userns/enter.js';
import { checkIdMap, DEFAULT_ID_MAP, subordinateIdMap } from '../../lib/engine/runtime/sandbox/userns/id-map.js';

const TOOLS = { unshare: '/usr/bin/unshare', nsenter: '/usr/bin/nsenter', setpriv: '/usr/bin/setpriv', file: '/proc/1/fd/9', gid: 100000 };

describe('the user namespace\'s range comes from /etc/subuid and /etc/subgid\'s root entry, else 100000-165535', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-subid-'));
  const files = (uid: string, gid: string): [string, string] => {
    writeFileSync(join(dir, 'subuid'), uid);
    writeFileSync(join(dir, 'subgid'), gid);
    return [join(dir, 'subuid'), join(dir, 'subgid')];
  };
  test('root\'s entries give the range (at most 65536 ids)', () => {
    expect(subordinateIdMap(...files('alice:100000:65536\nroot:200000:1000000\n', 'root:300000:65536\n'))).toEqual({ uid: 200000, gid: 300000, size: 65536 });
  });
  test('no root entry (or no file) gives 100000-165535', () => {
    expect(subordinateIdMap(...files('alice:100000:65536\n', 'alice:100000:65536\n'))).toEqual(DEFAULT_ID_MAP);
    expect(subordinateIdMap(join(dir, 'none'), join(dir, 'none'))).toEqual({ uid: 100000, gid: 100000, size: 65536 });
  });
  test('a range given as the option is checked once: host id 0 or a size over 65536 is a TypeError naming it', () => {
    expect(() => checkIdMap({ uid: 0, gid: 100000, size: 65536 }, 'userns')).toThrow(/option "userns"/);
    expect(() => checkIdMap({ uid: 100000, gid: 100000, size: 70000 }, 'userns')).toThrow(TypeError);
    expect(checkIdMap({ uid: 300000, gid: 300000, size: 1000 }, 'userns')).toEqual({ uid: 300000, gid: 300000, size: 1000 });
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
  test('an option the launcher does not know is an error, never skipped', () => {
    expect(() => stageSources(['--new-option', 'x'])).toThrow(/--new-option is not known/);
  });
  test('root enters with nsenter as uid 0; another user through bwrap --userns with no capability', () => {
    const [program, rootArgs] = inUserNamespace(TOOLS, 'bwrap', ['--bind', '/r', '/', '--cap-drop', 'ALL', '--cap-add', 'CAP_CHOWN'], ['id'], { uid: 0, gid: 0 });
    expect(program).toBe('/usr/bin/unshare');
    expect(rootArgs.join(' ')).toContain(`/usr/bin/nsenter --user=/proc/1/fd/9 --setuid=0 --setgid=0 -- bwrap --bind ${STAGE_DIR}/0 / --cap-drop ALL --cap-add CAP_CHOWN -- id`);
    const [, userArgs] = inUserNamespace(TOOLS, 'bwrap', ['--bind', '/r', '/', '--cap-drop', 'ALL', '--cap-add', 'CAP_CHOWN'], ['id'], { uid: 1000, gid: 0 });
    expect(userArgs.join(' ')).toContain(`/usr/bin/setpriv --regid=100000 --clear-groups -- bwrap --userns 7 --uid 1000 --gid 0 --bind ${STAGE_DIR}/0 / --cap-drop ALL -- id`);
  });
});
