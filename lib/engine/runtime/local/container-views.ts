import type { ContainerCreateBody } from '../../../engine-api/runtime-types.js';
import { healthcheckView } from './healthcheck-view.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalContainer } from './local-container.js';
import { HOST_CONFIG_DEFAULTS } from './host-config-defaults.js';
import { healthSuffix } from './healthcheck.js';
import { restartPolicyOf } from './restart-supervisor.js';
import { networkSettingsView, portsSummary, summaryNetworks } from './network-views.js';

const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * `GET /containers/{id}/json` for a local container (the fields real clients read).
 * `stoppedNetworks`: its `NetworkSettings.Networks` while it does not run (see {@link networkSettingsView});
 * `runtime`: the name `HostConfig.Runtime` shows.
 */
export function inspectView(c: LocalContainer, stoppedNetworks?: Record<string, Record<string, unknown>>, runtime?: string): Record<string, unknown> {
  // dockerd's restarting container is Running (and Restarting) until its restart or a stop.
  const restarting = c.restarting === true;
  const running = c.status === 'running' || restarting;
  return {
    Id: c.id,
    Created: c.created.toISOString(),
    Path: c.argv[0] ?? '',
    Args: c.argv.slice(1),
    State: {
      Status: restarting ? 'restarting' : c.paused === true && running ? 'paused' : c.status,
      Running: running,
      Paused: c.paused === true && running,
      Restarting: restarting,
      OOMKilled: c.oomKilled === true,
      Dead: false,
      Pid: c.status === 'running' ? c.pid : 0,
      ExitCode: c.exitCode,
      Error: c.error,
      StartedAt: c.startedAt?.toISOString() ?? ZERO_TIME,
      FinishedAt: c.finishedAt?.toISOString() ?? ZERO_TIME,
      ...(c.health ? { Health: { Status: c.health.Status, FailingStreak: c.health.FailingStreak, Log: c.health.Log } } : {}),
    },
    Image: c.image.id,
    // The file output goes to now (rotation starts the next one); empty when it is kept in memory or not at all.
    LogPath: c.log.path ?? '',
    Name: `/${c.name}`,
    RestartCount: c.restartCount ?? 0,
    Driver: 'dockgate',
    Platform: 'linux',
    // dockerd's paths and labels of files and security profiles a local container does not have: empty, as dockerd shows an unset one.
    ResolvConfPath: '',
    HostnamePath: '',
    HostsPath: '',
    MountLabel: '',
    ProcessLabel: '',
    AppArmorProfile: '',
    GraphDriver: { Data: null, Name: 'dockgate' },
    HostConfig: {
      // The create body's HostConfig as sent (every field in it was honored or refused at create),
      // so `docker inspect` shows the limits, binds and capabilities the container runs with;
      // over dockerd's unset values for the fields it left out.
      ...HOST_CONFIG_DEFAULTS,
      ...(c.body.HostConfig ?? {}),
      ...defaultSwap(c.body.HostConfig ?? undefined),
      LogConfig: c.logging?.view ?? { Type: 'json-file', Config: {} },
      NetworkMode: c.body.HostConfig?.NetworkMode ?? 'default',
      AutoRemove: c.autoRemove,
      RestartPolicy: restartPolicyOf(c.body.HostConfig),
      // dockerd shows the runtime that runs the container (`runc`); here it is the local runtime.
      ...(runtime !== undefined ? { Runtime: runtime } : {}),
    },
    Mounts: [],
    Config: {
      Hostname: c.id.slice(0, 12),
      Domainname: c.body.Domainname ?? '',
      User: c.body.User ?? '',
      AttachStdin: c.body.AttachStdin ?? false,
      AttachStdout: c.body.AttachStdout ?? false,
      AttachStderr: c.body.AttachStderr ?? false,
      Tty: c.tty,
      OpenStdin: c.openStdin,
      StdinOnce: c.body.StdinOnce ?? false,
      Env: c.env,
      // The kept body holds the merged Cmd and Entrypoint (keptBody): the image's are in it already, or were not taken.
      Cmd: c.body.Cmd ?? null,
      Image: c.body.Image,
      Volumes: c.body.Volumes ?? null,
      WorkingDir: c.body.WorkingDir ?? '',
      Entrypoint: c.body.Entrypoint ?? null,
      OnBuild: null,
      Labels: c.labels,
      // dockerd sends these two only when set (omitempty); docker-py reads StopTimeout back.
      ...(typeof c.body.StopSignal === 'string' && c.body.StopSignal !== '' ? { StopSignal: c.body.StopSignal } : {}),
      ...(typeof c.body.StopTimeout === 'number' ? { StopTimeout: c.body.StopTimeout } : {}),
      ...(c.body.Healthcheck ? { Healthcheck: healthcheckView(c.body.Healthcheck) } : {}),
      ...(c.body.ExposedPorts ? { ExposedPorts: c.body.ExposedPorts } : {}),
    },
    // testcontainers maps `NetworkSettings.Ports` right after start; dockerd sends {} when nothing is published.
    NetworkSettings: networkSettingsView(c, stoppedNetworks),
  };
}

/**
 * dockerd stores a memory limit without MemorySwap as twice the memory (adaptContainerSettings),
 * which is also the swap limit the sandbox's cgroups get; inspect shows that value.
 */
function defaultSwap(host: Record<string, unknown> | undefined): Record<string, unknown> {
  const memory = host?.Memory;
  const swap = host?.MemorySwap;
  return typeof memory === 'number' && memory > 0 && (swap === undefined || swap === null || swap === 0) ? { MemorySwap: memory * 2 } : {};
}

/** One entry of `GET /containers/json`; `stoppedNetworks` as for {@link inspectView}. */
export function summaryView(c: LocalContainer, now = Date.now(), stoppedNetworks?: Record<string, Record<string, unknown>>): Record<string, unknown> {
  return {
    Id: c.id,
    Names: [`/${c.name}`],
    Image: c.body.Image,
    ImageID: c.image.id,
    Command: c.argv.join(' '),
    Created: Math.floor(c.created.getTime() / 1000),
    Ports: portsSummary(c),
    Labels: c.labels,
    State: c.restarting === true ? 'restarting' : c.paused === true && c.status === 'running' ? 'paused' : c.status,
    Status: humanStatus(c, now),
    HostConfig: { NetworkMode: c.body.HostConfig?.NetworkMode ?? 'default' },
    NetworkSettings: { Networks: summaryNetworks(c, stoppedNetworks) },
    Mounts: [],
  };
}

/** The Status column of `docker ps`, worded as dockerd words it. */
function humanStatus(c: LocalContainer, now: number): string {
  if (c.restarting === true) return `Restarting (${c.exitCode}) ${humanDuration(now - (c.finishedAt?.getTime() ?? now))} ago`;
  switch (c.status) {
    case 'running':
      return `Up ${humanDuration(now - (c.startedAt?.getTime() ?? now))}${c.paused === true ? ' (Paused)' : healthSuffix(c.health)}`;
    case 'exited':
      return `Exited (${c.exitCode}) ${humanDuration(now - (c.finishedAt?.getTime() ?? now))} ago`;
    case 'removing':
      return 'Removal In Progress';
    default:
      return 'Created';
  }
}

/** go-units HumanDuration, to the minute/hour granularity `docker ps` shows. */
function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 1) return 'Less than a second';
  if (s === 1) return '1 second';
  if (s < 60) return `${s} seconds`;
  const m = Math.floor(s / 60);
  if (m === 1) return 'About a minute';
  if (m < 60) return `${m} minutes`;
  const h = Math.round(m / 60);
  return h === 1 ? 'About an hour' : `${h} hours`;
}

/**
 * The body a new container keeps (its record) and inspect echoes: the body as sent (`sent.raw`)
 * with what create settled written over it from the spec `made` (the image's config, the merged
 * healthcheck, `container:` resolved to an id), the way dockerd's stored config shows them.
 */
export function keptBody(sent: ContainerSpec, made: ContainerSpec): ContainerCreateBody {
  const body = sent.raw;
  const host = body.HostConfig;
  return {
    ...body,
    // An Entrypoint sent with an empty Cmd list keeps that list (dockerd echoes it); otherwise no Cmd is null.
    Cmd: made.cmd && made.cmd.length > 0 ? [...made.cmd] : isSent(body.Entrypoint) && Array.isArray(body.Cmd) ? [] : null,
    Entrypoint: made.entrypoint && made.entrypoint.length > 0 ? [...made.entrypoint] : null,
    Env: [...made.env],
    Labels: { ...made.labels },
    ...(made.user !== '' ? { User: made.user } : {}),
    ...(made.workingDir !== '' ? { WorkingDir: made.workingDir } : {}),
    ...(made.stopSignal !== '' ? { StopSignal: made.stopSignal } : {}),
    ...(sameKeys(made.exposedPorts, body.ExposedPorts) ? {} : { ExposedPorts: keyed(made.exposedPorts, body.ExposedPorts) }),
    ...(sameKeys(made.volumes, body.Volumes) ? {} : { Volumes: keyed(made.volumes, body.Volumes) }),
    ...(made.healthcheck !== undefined && made.healthcheck !== null ? { Healthcheck: made.healthcheck } : {}),
    ...(made.host.networkMode !== sent.host.networkMode ? { HostConfig: { ...host, NetworkMode: made.host.networkMode } } : {}),
  };
}

function isSent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function entries(sent: unknown): Record<string, unknown> {
  return sent && typeof sent === 'object' ? (sent as Record<string, unknown>) : {};
}

function sameKeys(made: readonly string[], sent: unknown): boolean {
  const own = Object.keys(entries(sent));
  return own.length === made.length && own.every((k, i) => k === made[i]);
}

/** `{ key: {} }` for each of `made`, keeping the value sent for a key the body had. */
function keyed(made: readonly string[], sent: unknown): Record<string, unknown> {
  const own = entries(sent);
  return Object.fromEntries(made.map((k) => [k, Object.hasOwn(own, k) ? own[k] : {}]));
}

