import { describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { COMMAND_HELPERS, launchOffLoop, OffLoopChild, runOffLoop } from '../../../lib/engine/linux/off-loop-command.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

const built: PeerCheck = { name: 'dist/ (npm run build)', available: () => existsSync(new URL('../../../dist/engine/linux/off-loop-command.js', import.meta.url)) };

describe('runOffLoop runs a command to its end, spawned by a helper process: its status, stdout and stderr, stdin from input', () => {
  test('status, output, input and environment', async () => {
    expect(await runOffLoop('/bin/sh', ['-c', 'cat; echo err >&2; exit 3'], { input: 'in\n' })).toEqual({ code: 3, signal: null, stdout: 'in\n', stderr: 'err\n' });
    expect((await runOffLoop('/bin/sh', ['-c', 'echo "$X"'], { env: { X: 'given' } })).stdout).toBe('given\n');
    expect(await runOffLoop('/bin/sh', ['-c', 'kill -9 $$'])).toMatchObject({ code: null, signal: 'SIGKILL' });
  });
  test('a program that cannot be run rejects with spawn\'s code', async () => {
    await expect(runOffLoop('/nonexistent/program', [])).rejects.toMatchObject({ code: 'ENOENT' });
  });
  test('many at once all finish, over the helper processes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-offloop-'));
    const results = await Promise.all(Array.from({ length: COMMAND_HELPERS * 4 }, (_, i) => runOffLoop('mkfifo', ['-m', '0600', join(dir, `f${i}`)])));
    expect(results.every((r) => r.code === 0)).toBe(true);
    expect(readdirSync(dir)).toHaveLength(COMMAND_HELPERS * 4);
    expect(statSync(join(dir, 'f0')).isFIFO()).toBe(true);
  });
});

describe('an OffLoopChild is kept by a helper process: ready on its first byte on the ready descriptor, ended by closing a descriptor, its stderr kept', () => {
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

describe('launchOffLoop spawns a child from a helper process and hands its pipes to the server: every byte of its output, its stdin, its status', () => {
  const run = (file: string, args: string[], stdin: boolean) => {
    const child = launchOffLoop(file, args, { env: { PATH: '/usr/bin:/bin' }, stdin });
    const out = { stdout: '', stderr: '' };
    const closed = new Promise<[number | null, string | null]>((resolve) => child.on('close', (code, signal) => resolve([code, signal])));
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
        child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
        resolve();
      });
      child.once('error', reject);
    });
    return { child, out, closed, spawned };
  };
  test('output written at once is all there, from its first byte; close comes with the status after the pipes end', async () => {
    const { child, out, closed, spawned } = run('/bin/sh', ['-c', 'echo first; echo "$PATH" >&2; seq 1 20000; exit 4'], false);
    await spawned;
    expect(child.pid).toBeGreaterThan(0);
    expect(child.stdin).toBeNull();
    expect(await closed).toEqual([4, null]);
    expect(out.stdout.startsWith('first\n1\n2\n')).toBe(true);
    expect(out.stdout.endsWith('\n19999\n20000\n')).toBe(true);
    expect(out.stderr).toBe('/usr/bin:/bin\n');
  });
  test('stdin is a pipe the server writes when asked; kill signals it', async () => {
    const cat = run('/bin/cat', [], true);
    await cat.spawned;
    cat.child.stdin!.end('to the child\n');
    expect(await cat.closed).toEqual([0, null]);
    expect(cat.out.stdout).toBe('to the child\n');
    const sleeper = run('/bin/sleep', ['60'], false);
    await sleeper.spawned;
    expect(sleeper.child.kill('SIGKILL')).toBe(true);
    expect(await sleeper.closed).toEqual([null, 'SIGKILL']);
    expect(sleeper.child.kill('SIGKILL')).toBe(false);
  });
  test('a program that cannot be run emits error with spawn\'s code', async () => {
    const { spawned } = run('/nonexistent/program', [], false);
    await expect(spawned).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('launchOffLoop with argsFile: the helper opens the file as the child\'s descriptor and unlinks it, so the server never polls for the child\'s own open', () => {
  const launch = (path: string, script: string) => {
    const child = launchOffLoop('/bin/sh', ['-c', script], { env: { PATH: '/usr/bin:/bin' }, stdin: false, argsFile: { fd: 5, path } });
    let stdout = '';
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
        resolve();
      });
      child.once('error', reject);
    });
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { spawned, closed, out: () => stdout };
  };
  test('the child reads the file on descriptor 5; by the time it runs the file is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-args-file-'));
    const path = join(dir, 'args');
    writeFileSync(path, 'secret arguments\0', { mode: 0o600 });
    // Before, the option did not exist: the child had no descriptor 5 and the file stayed.
    const { spawned, closed, out } = launch(path, 'cat <&5; echo');
    await spawned;
    expect(existsSync(path)).toBe(false);
    expect(await closed).toBe(0);
    expect(out()).toBe('secret arguments\0\n');
  });
  test('a file that cannot be opened: error, and nothing runs', async () => {
    const { spawned } = launch(join(tmpdir(), 'dockgate-no-such-args-file'), 'echo ran');
    await expect(spawned).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describeWithPeers('a kept child\'s descriptors close when the server dies, even by SIGKILL (slirp4netns ends on its exit descriptor)', [built], () => {
  test('a server process SIGKILLed: the helper exits, the child reads EOF on its exit descriptor and ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-offloop-kill-'));
    const marker = join(dir, 'gone');
    const module = new URL('../../../dist/engine/linux/off-loop-command.js', import.meta.url).href;
    const server = spawn(process.execPath, ['--input-type=module', '-e', `
      const { OffLoopChild } = await import(${JSON.stringify(module)});
      const child = OffLoopChild.start('/bin/sh', ['-c', 'echo up >&3; cat <&4 >/dev/null; echo gone > ${marker}'], { extraFds: 2, readyFd: 3 });
      await child.ready;
      console.log('ready');
      setInterval(() => undefined, 1000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => server.stdout.on('data', (c: Buffer) => c.toString().includes('ready') && resolve()));
    expect(existsSync(marker)).toBe(false);
    server.kill('SIGKILL');
    for (let i = 0; i < 100 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(marker, 'utf8')).toBe('gone\n');
  });
});

/** Files under lib/engine/runtime/sandbox that spawn a child from the event loop, each with why it must. */
const ON_THE_LOOP: Record<string, string> = {
  'network/network-hub.ts': "a network's relay in its own namespace, started once per network (not per start), its pipes the server's",
  'userns/user-namespace.ts': "the holder of an owner's user namespace, made once per owner range (not per start)",
  'userns/rootless-userns.ts': "the holder of a rootless server's mapped user namespace (and of each owner's), made once (not per start)",
  'network/network-userns.ts': "the holder of a rootless server's own user namespace, made once per server (not per start), its stdin the server's",
  'rootless-tmpfs.ts': "the holder of a rootless server's tmpfs mount namespace, made once per server (not per start), its stdin the server's",
  'userns/ns-reader.ts': 'a read of a rootless container\'s files inside its namespace, whose output the server streams (commit and diff, when the server\'s user may not read a directory; not per start)',
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
