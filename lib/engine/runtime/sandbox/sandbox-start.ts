import type { LocalProcess } from '../local/local-container.js';
import { bindSpecs } from './bwrap-args.js';
import { HeldBinds } from './held-binds.js';
import { runStages } from './launch/stages.js';
import { START_STAGES } from './launch/start-stages.js';
import { StartContext, type StartRun } from './launch/start-context.js';
import { started } from './launch/started.js';
import type { SandboxState } from './sandbox-state.js';

/**
 * Starts a container. Each host bind source is walked from / without following and held open
 * while the container runs (held-binds.ts): a link planted on its path since create is a 400,
 * before anything is prepared. Its stages (launch/start-stages.ts) then run in order, and a
 * failure undoes what the earlier ones made.
 */
export async function startSandbox(state: SandboxState, run: StartRun): Promise<LocalProcess> {
  const held = await HeldBinds.open(bindSpecs(run.spec));
  try {
    state.stopReasons.delete(run.id);
    const ctx = new StartContext(state, run, held);
    await runStages(START_STAGES, ctx);
    const proc = started(ctx);
    return { ...proc, exited: proc.exited.finally(() => held.close()) };
  } catch (error) {
    await held.close();
    throw error;
  }
}
