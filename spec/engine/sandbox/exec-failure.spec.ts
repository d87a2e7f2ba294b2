import { describe, test, expect } from '@jest/globals';
import { dockerdExecFailure, withExecFailure } from '../../../lib/engine/runtime/sandbox/exec-failure.js';
import { parseNetDev } from '../../../lib/engine/runtime/local/net-dev.js';
import type { LocalProcess } from '../../../lib/engine/runtime/local/local-container.js';

const RUNC = 'OCI runtime exec failed: exec failed: unable to start container process: exec:';

/** Feeds `chunks` through the filter, then ends the process with `code`; what the client got and the exit code. */
async function through(chunks: [1 | 2, string][], code: number): Promise<{ out: [number, string][]; code: number }> {
  const out: [number, string][] = [];
  const filter = withExecFailure((stream, data) => out.push([stream, data.toString()]));
  let exit!: (code: number) => void;
  const proc = filter.exited({ pid: 1, exited: new Promise<number>((r) => (exit = r)), pause: () => undefined, resume: () => undefined, kill: () => undefined } as LocalProcess);
  for (const [stream, text] of chunks) filter.output(stream, Buffer.from(text));
  exit(code);
  return { out, code: await proc.exited };
}

describe('bubblewrap\'s execvp failure becomes dockerd\'s exit 126 and runc\'s message', () => {
  test('runc\'s words: a name is looked up in PATH, a path is stat\'ed, other errors as the kernel says', () => {
    expect(dockerdExecFailure('nosuch', 'No such file or directory')).toBe(`${RUNC} "nosuch": executable file not found in $PATH: unknown\r\n`);
    expect(dockerdExecFailure('plain', 'Permission denied')).toBe(`${RUNC} "plain": executable file not found in $PATH: unknown\r\n`);
    expect(dockerdExecFailure('/x/y', 'No such file or directory')).toBe(`${RUNC} "/x/y": stat /x/y: no such file or directory: unknown\r\n`);
    expect(dockerdExecFailure('/plain', 'Permission denied')).toBe(`${RUNC} "/plain": permission denied: unknown\r\n`);
    expect(dockerdExecFailure('/bin.sh', 'Exec format error')).toBe(`${RUNC} "/bin.sh": exec format error: unknown\r\n`);
  });
  test('the line on stderr (even in pieces) and status 1: replaced, 126, on stdout', async () => {
    expect(await through([[2, 'bwrap: exe'], [2, 'cvp nosuch: No such file or directory\n']], 1))
      .toEqual({ out: [[1, `${RUNC} "nosuch": executable file not found in $PATH: unknown\r\n`]], code: 126 });
  });
  test('on a terminal (one stream, \\r\\n) the same', async () => {
    expect(await through([[1, 'bwrap: execvp /d: Permission denied\r\n']], 1)).toEqual({ out: [[1, `${RUNC} "/d": permission denied: unknown\r\n`]], code: 126 });
  });
  test('a command that ran: its output and status untouched, in order', async () => {
    expect(await through([[1, 'bwrap: execvp'], [1, '\n']], 1)).toEqual({ out: [[1, 'bwrap: execvp'], [1, '\n']], code: 1 });
    expect(await through([[2, 'bwrap: execvp x: No such file or directory\n']], 3)).toEqual({ out: [[2, 'bwrap: execvp x: No such file or directory\n']], code: 3 });
    expect(await through([[1, 'out\n'], [2, 'bwrap: execvp x: No such file or directory\n']], 1)).toEqual({ out: [[1, 'out\n'], [2, 'bwrap: execvp x: No such file or directory\n']], code: 1 });
    expect(await through([[2, 'bwr'], [1, 'x']], 0)).toEqual({ out: [[2, 'bwr'], [1, 'x']], code: 0 });
  });
});

describe('a container\'s network counters come from /proc/net/dev of its namespace, without lo', () => {
  test('dockerd\'s eight counters per interface, in Go\'s order', () => {
    const text = [
      'Inter-|   Receive                                                |  Transmit',
      ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed',
      '    lo:     100       2    0    0    0     0          0         0      100       2    0    0    0     0       0          0',
      '  eth0:    1234      10    1    2    0     0          0         0      516       6    3    4    0     0       0          0',
    ].join('\n');
    expect(parseNetDev(text)).toEqual({
      eth0: { rx_bytes: 1234, rx_packets: 10, rx_errors: 1, rx_dropped: 2, tx_bytes: 516, tx_packets: 6, tx_errors: 3, tx_dropped: 4 },
    });
    expect(Object.keys(parseNetDev(text).eth0!)).toEqual(['rx_bytes', 'rx_packets', 'rx_errors', 'rx_dropped', 'tx_bytes', 'tx_packets', 'tx_errors', 'tx_dropped']);
  });
});
