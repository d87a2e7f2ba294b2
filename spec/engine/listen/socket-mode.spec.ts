import { describe, test, expect } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { listenEngine } from '../../../lib/engine/index.js';

/**
 * A separate process that spins on lstat(path) from before the socket exists until `ms` after it
 * first appears, and reports every permission mode it saw. A socket bound and chmod-ed afterwards
 * shows its umask mode (0755 here) for the moment between the two; the spinning catches that.
 */
function watchModes(path: string, ms: number): { ready: Promise<void>; modes: Promise<string[]> } {
  const script = `
    const { lstatSync } = require('node:fs');
    const seen = new Set();
    let first = 0;
    process.stdout.write('ready\\n');
    for (;;) {
      const st = lstatSync(process.argv[1], { throwIfNoEntry: false });
      if (st) {
        seen.add((st.mode & 0o777).toString(8));
        first ||= Date.now();
      }
      if (first && Date.now() - first > Number(process.argv[2])) break;
    }
    process.stdout.write(JSON.stringify([...seen]) + '\\n');
  `;
  const child = spawn(process.execPath, ['-e', script, path, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let readyResolve: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (readyResolve = resolve));
  const modes = new Promise<string[]>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('ready\n')) readyResolve();
    });
    child.on('exit', () => {
      const last = out.trim().split('\n').pop() ?? '[]';
      try {
        resolve(JSON.parse(last) as string[]);
      } catch (error) {
        reject(error);
      }
    });
  });
  return { ready, modes };
}

describe('listenEngine\'s Unix socket never exists with a wider mode than asked', () => {
  test('a process watching the path from before it exists sees only the given mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-mode-'));
    const socket = join(dir, 'engine.sock');
    const watcher = watchModes(socket, 300);
    await watcher.ready;
    const listener = await listenEngine(express(), { socket, mode: 0o600 });
    try {
      expect(await watcher.modes).toEqual(['600']);
      expect(statSync(socket).mode & 0o777).toBe(0o600);
    } finally {
      await listener.close();
    }
  });
  test('the private name it was bound under is gone, the directory holds only the socket, and it answers there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-mode-'));
    const socket = join(dir, 'engine.sock');
    const app = express();
    app.get('/ping', (_req, res) => void res.send('pong'));
    const listener = await listenEngine(app, { socket });
    try {
      expect(readdirSync(dir)).toEqual(['engine.sock']);
      const body = await new Promise<string>((resolve, reject) => {
        import('node:http').then(({ get }) =>
          get({ socketPath: socket, path: '/ping' }, (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve(text));
          }).on('error', reject));
      });
      expect(body).toBe('pong');
    } finally {
      await listener.close();
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});
