import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalContainer } from './local-container.js';
import { OutputLog } from './output-log.js';
import { keptLogSettings, type LogSettings } from './log-config.js';
import { restoredContainer, type RestoredContainer } from './container-records.js';
import type { MountPoint } from './container-mounts.js';

/** What bringing back a kept container needs from the runtime. */
export interface RestoreHost {
  /** The runtime's name (the log driver check names it). */
  readonly runtime: string;
  /** Bytes of output kept in memory per container. */
  readonly maxLogBytes: number;
  newLog(id: string, logging: LogSettings): OutputLog;
  /** The mounts a body gets, or undefined when the runtime has no volumes. */
  mountsFor(spec: ContainerSpec): MountPoint[] | undefined;
  /** Puts the container in the table; throws when its id or name is taken. */
  add(c: LocalContainer): void;
  /** Keeps its changed record. */
  save(c: LocalContainer): void;
  /** Forgets a container that does not come back: the executor's leftovers and its record. */
  drop(id: string): void;
}

/** A container kept by an earlier server: back in the table as it was, a running one as exited. */
export function restoreContainer(restored: RestoredContainer, host: RestoreHost): void {
  let back: LocalContainer;
  try {
    back = restoredContainer(restored, new OutputLog({ capacity: host.maxLogBytes }));
  } catch {
    // A kept body that no longer decodes (container-spec.ts) does not come back, as one whose id is taken.
    return;
  }
  const logging = keptLogSettings(back.spec, host.runtime);
  try {
    back.log = host.newLog(restored.record.id, logging);
  } catch {
    // The in-memory log made above.
  }
  back.logging = logging;
  const { log } = back;
  // A record from before mounts were kept: its binds and named volumes, as it ran them.
  if (!back.mounts) {
    try {
      const mounts = host.mountsFor({ ...back.spec, volumes: [], host: { ...back.spec.host, volumesFrom: [] } });
      if (mounts) back.mounts = mounts;
    } catch {
      back.mounts = [];
    }
  }
  // An AutoRemove container that was running is removed on the way back, as dockerd does after a crash.
  if (back.autoRemove && back.status !== restored.record.status) {
    log.close();
    host.drop(back.id);
    return;
  }
  try {
    host.add(back);
  } catch {
    log.close();
    return;
  }
  if (back.status !== restored.record.status) host.save(back);
}
