import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { COMMAND_WORKERS, OffLoopChild, runOffLoop } from '../../../lib/engine/linux/off-loop-command.js';

describe('runOffLoop runs a command to its end from a worker thread: its status, stdout and stderr, stdin from input', () => {
  test('status, output, input and environment', async () => {
    expect(await runOffLoop('/bin/sh', ['-c', 'cat; echo err >&2; exit 3'], { input: 'in\n' })).toEqual({ code: 3, signal: null, stdout: 'in\n', stderr: 'err\n' });
    expect((await runOffLoop('/bin/sh', ['-c', 'echo "$X"'], { env: { X: 'given' } })).stdout).toBe('given\n');
    expect(await runOffLoop('/bin/sh', ['-c', 'kill -9 $$'])).toMatchObject({ code: null, signal: 'SIGKILL' });
  });
  test('a program that cannot be run rejects with spawn\'s code', async () => {
    await expect(runOffLoop('/nonexistent/program', [])).rejects.toMatchObject({ code: 'ENOENT' });
  });
  test('many at once all finish, over the worker threads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-offloop-'));
    const results = await Promise.all(Array.from({ length: COMMAND_WORKERS * 4 }, (_, i) => runOffLoop('mkfifo', ['-m', '0600', join(dir, `f${i}`)])));
    expect(results.every((r) => r.code === 0)).toBe(true);
    expect(readdirSync(dir)).toHaveLength(COMMAND_WORKERS * 4);
    expect(statSync(join(dir, 'f0')).isFIFO()).toBe(true);
  });
});

describe('an OffLoopChild is kept by a worker thread: ready on its first byte on the ready descriptor, ended by closing a descriptor, its stderr kept', () => {
  test('ready, then it exits when its exit descriptor closes', async () => {
    // fd 3: ready (written once); fd 4: exit (the child ends at EOF on it).
    const child = OffLoopChild.start('/bin/sh', ['-c', 'echo up >&3; echo said >&2; cat <&4'], { extraFds: 2, readyFd: 3 });
    await child.ready;
    expect(child.exit).toBeUndefined();
    child.closeFd(4);
    expect(await child.exited).toEqual({ code: 0, signal: null, stderr: 'said\n' });
  });
  test('one that exits before it is ready rejects ready, with its stderr in exit', async () => {
    const child = OffLoopChild.start('/bin/sh', ['-c', 'echo no >&2; exit 2'], { extraFds: 2, readyFd: 3 });
    await expect(child.ready).rejects.toThrow('exited before it was ready');
    expect(child.exit).toEqual({ code: 2, signal: null, stderr: 'no\n' });
  });
  test('kill ends it; a missing program rejects ready with ENOENT', async () => {
    const child = OffLoopChild.start('/bin/sh', ['-c', 'echo up >&3; exec sleep 60'], { extraFds: 1, readyFd: 3 });
    await child.ready;
    child.kill('SIGKILL');
    expect(await child.exited).toMatchObject({ signal: 'SIGKILL' });
    const missing = OffLoopChild.start('/nonexistent/program', [], { extraFds: 1, readyFd: 3 });
    await expect(missing.ready).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

/** Files under lib/engine/runtime/sandbox that spawn a child from the event loop, each with why it must. */
const ON_THE_LOOP: Record<string, string> = {
  'sandbox-process.ts': "the container's launcher: the server reads its stdout and stderr pipes (the container's output) and writes its stdin",
  'network/network-hub.ts': "a network's relay in its own namespace, started once per network (not per start), its pipes the server's",
  'userns/user-namespace.ts': "the holder of an owner's user namespace, made once per owner range (not per start)",
};

describe('a container start spawns on the event loop only the children whose pipes the server keeps: run-to-completion commands and slirp4netns go through off-loop-command.ts', () => {
  const dir = join(process.cwd(), 'lib/engine/runtime/sandbox');
  const files = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : []));
  test('child_process spawn and execFile appear only in the listed files', () => {
    const found = files(dir)
      .filter((f) => /\b(?:spawn|execFile)\s*\(/.test(readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')))
      .map((f) => relative(dir, f)).sort();
    expect(found).toEqual(Object.keys(ON_THE_LOOP).sort());
  });
});
