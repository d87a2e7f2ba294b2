#!/usr/bin/env node
/**
 * `npm test`: every spec, in two lanes that run at the same time, each in band.
 *
 * - The **peers** lane: everything that drives real programs or starts containers (spec/interop,
 *   the sandbox and isolation specs, the demo…). These share dockerd, the registry, Redis and the
 *   machine's namespaces, so they run one file at a time, as before.
 * - The **light** lane: the folders below, whose specs talk HTTP to an app in their own process and
 *   start no container and no peer. A file of these folders that names a runtime or peer
 *   (`PEER_MARKS`) still goes to the peers lane, and so does every folder not listed.
 *
 * On the 2-core CI machine kind the light lane (about 115 files) finishes inside the peers lane's
 * time, which it used to add to. With arguments (`npm test -- spec/token`), this is plain jest.
 * `DOCKGATE_TEST_LANES=serial` runs the lanes one after the other (to rule out their overlap);
 * `DOCKGATE_TEST_LANES=list` prints each lane's files.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const LIGHT = [
  'spec/token', 'spec/bearer', 'spec/scope', 'spec/errors', 'spec/http', 'spec/client',
  'spec/observability', 'spec/hardening', 'spec/reference', 'spec/cli',
  'spec/engine/container', 'spec/engine/policy', 'spec/engine/protocol', 'spec/engine/system',
  'spec/engine/listen', 'spec/engine/swarm', 'spec/engine/plugin', 'spec/engine/exec',
  'spec/engine/logs', 'spec/engine/images', 'spec/engine/linux',
];

/** A spec file that mentions one of these reaches a shared peer or starts containers. */
const PEER_MARKS = /sandboxRuntime|dockerRuntime\(|docker\.sock|bwrap|docker-py|describeWithPeers|spawn\(|execFile/;

async function specFiles(dir) {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.spec.ts')).map((e) => resolve(e.parentPath ?? e.path, e.name));
}

/** The light lane's files: those of the LIGHT folders that mention no peer. */
async function lightFiles() {
  const files = (await Promise.all(LIGHT.map((d) => specFiles(join(process.cwd(), d))))).flat();
  const marked = await Promise.all(files.map(async (f) => PEER_MARKS.test(await readFile(f, 'utf8'))));
  return files.filter((_, i) => !marked[i]).sort();
}

const jestBin = createRequire(import.meta.url).resolve('jest/bin/jest');
const args = process.argv.slice(2);
const env = { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS, '--experimental-vm-modules'].filter(Boolean).join(' ') };

/** One jest run; its lines go out prefixed with the lane's name when `label` is given. */
function jest(jestArgs, label) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [jestBin, ...jestArgs], { env, stdio: label ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (label) {
      for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
        createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(`[${label}] ${line}\n`));
      }
    }
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const exactly = (file) => `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

if (args.length > 0) {
  process.exitCode = await jest(args);
} else {
  const files = await lightFiles();
  const light = ['--runInBand', '--runTestsByPath', ...files];
  const peers = ['--runInBand', '--testPathIgnorePatterns', ...files.map(exactly)];
  if (process.env.DOCKGATE_TEST_LANES === 'list') {
    light.push('--listTests');
    peers.push('--listTests');
  }
  const started = Date.now();
  const codes = process.env.DOCKGATE_TEST_LANES !== undefined
    ? [await jest(light, 'light'), await jest(peers, 'peers')]
    : await Promise.all([jest(light, 'light'), jest(peers, 'peers')]);
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`\nlanes: light ${codes[0] === 0 ? 'passed' : 'FAILED'}, peers ${codes[1] === 0 ? 'passed' : 'FAILED'} (${seconds} s in all)`);
  process.exitCode = codes.some((c) => c !== 0) ? 1 : 0;
}
