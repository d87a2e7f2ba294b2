/** `dockgate/engine/sandbox`: the bubblewrap runtime (needs the optional peer node-pty for Tty). */
export { sandboxRuntime } from './sandbox-runtime.js';
export type { SandboxRuntimeOptions } from './sandbox-options.js';
