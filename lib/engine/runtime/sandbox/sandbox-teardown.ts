import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Beneath } from '../../linux/beneath.js';
import type { RootlessTmpfs } from './rootless-tmpfs.js';
import type { SandboxState } from './sandbox-state.js';

/**
 * What goes with a removed container: its overlay is unmounted and its writes (or its copy)
 * removed, asynchronously (rm -f answers first), with its tmpfs directories, its user networks'
 * endpoints and its stop reason; the record and output are removed by the runtime's records.
 */
export function removeSandboxContainer(state: SandboxState, id: string): void {
  const { containersDir, mapped } = state;
  state.stopReasons.delete(id);
  void Promise.resolve(state.sharedTmpfs.remove(id)).catch(() => undefined);
  state.userNets?.forget(id);
  void state.overlays?.remove(id).catch(() => undefined);
  // Rootless with a mapped range, the copy holds files of the range's ids: removed by the namespace's root.
  const copy = join(containersDir, id, 'rootfs');
  if (mapped && existsSync(copy)) void mapped.run(['rm', '-rf', '--', copy]).then(() => rm(join(containersDir, id), { recursive: true, force: true })).catch(() => undefined);
  else void Beneath.removeIn(join(containersDir, id), 'rootfs').catch(() => undefined);
}

/** The runtime closes: every overlay is unmounted (the containers' writes stay for the next server); the networks' records are on disk first. */
export async function closeSandbox(state: SandboxState): Promise<void> {
  // An image tree still being prepared in the background holds a mount in the state directory.
  await state.images.opened?.settled();
  await state.overlays?.close();
  await state.userNets?.settled();
  await (state.sharedTmpfs as Partial<RootlessTmpfs>).close?.();
  (await state.netUserns?.catch(() => undefined))?.stop();
}
