/** `dockgate/engine/process`: host programs as containers (needs the optional peer node-pty for Tty). */
export { processRuntime, type ProcessRuntimeOptions, type ProcessImage } from './process-runtime.js';
