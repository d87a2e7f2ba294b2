import { PassThrough } from 'node:stream';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalContainer, LocalImage } from './local-container.js';
import type { OutputLog } from './output-log.js';
import type { LogSettings } from './log-config.js';
import type { MountPoint } from './container-mounts.js';

/** What a create has settled for a new container. */
export interface NewContainer {
  id: string;
  /** Without the leading `/`; a generated one when the create names none. */
  name: string | undefined;
  image: LocalImage;
  /** Its spec as settled at create; its `raw` is the body kept (container-views.ts keptBody). */
  spec: ContainerSpec;
  argv: string[];
  env: string[];
  labels: Record<string, string>;
  log: OutputLog;
  logging: LogSettings;
  mounts: MountPoint[] | undefined;
}

/** A just-created container's entry: `created`, with no run yet. */
export function newContainer({ id, name, image, spec, argv, env, labels, log, logging, mounts }: NewContainer): LocalContainer {
  return {
    id,
    name: name ?? `dockgate_${id.slice(0, 12)}`,
    created: new Date(),
    image,
    body: spec.raw,
    spec,
    argv,
    env,
    tty: spec.tty,
    openStdin: spec.openStdin,
    autoRemove: spec.host.autoRemove,
    labels,
    status: 'created',
    pid: 0,
    exitCode: 0,
    error: '',
    log,
    logging,
    stdin: spec.openStdin ? new PassThrough() : undefined,
    exitWaiters: new Set(),
    removeWaiters: new Set(),
    ...(mounts ? { mounts } : {}),
  };
}
