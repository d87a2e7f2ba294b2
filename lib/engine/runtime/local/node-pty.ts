import type * as NodePty from 'node-pty';
import { importPeer } from '../../../errors/missing-peer-error.js';

// node-pty is an optional peer dependency: a native add-on with no Linux prebuilds, so installing
// it compiles C++ (node-gyp). Only the sandbox and process runtimes (Tty containers and execs)
// load it, through this module, and a host without it gets an error naming the package when it
// imports one of them, not a bare "cannot find package" from deep inside.
const nodePty = await importPeer<typeof NodePty>(() => import('node-pty'), 'node-pty', 'dockgate/engine/sandbox and dockgate/engine/process (pseudo-terminals for Tty)');

/** node-pty's `spawn`. */
export const spawnPty: typeof NodePty.spawn = nodePty.spawn;
