/** `dockgate/engine/sandbox`: the bubblewrap runtime (needs the optional peer node-pty for Tty). */
export { sandboxRuntime, type SandboxRuntimeOptions } from './sandbox-runtime.js';
