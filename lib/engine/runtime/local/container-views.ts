import type { LocalContainer } from './local-container.js';

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** `GET /containers/{id}/json` for a local container (the fields real clients read). */
export function inspectView(c: LocalContainer): Record<string, unknown> {
  const running = c.status === 'running';
  return {
    Id: c.id,
    Created: c.created.toISOString(),
    Path: c.argv[0] ?? '',
    Args: c.argv.slice(1),
    State: {
      Status: c.paused === true && running ? 'paused' : c.status,
      Running: running,
      Paused: c.paused === true && running,
      Restarting: false,
      OOMKilled: c.oomKilled === true,
      Dead: false,
      Pid: running ? c.pid : 0,
      ExitCode: c.exitCode,
      Error: c.error,
      StartedAt: c.startedAt?.toISOString() ?? ZERO_TIME,
      FinishedAt: c.finishedAt?.toISOString() ?? ZERO_TIME,
    },
    Image: c.image.id,
    // The file output goes to now (rotation starts the next one); empty when it is kept in memory or not at all.
    LogPath: c.log.path ?? '',
    Name: `/${c.name}`,
    RestartCount: 0,
    Driver: 'dockgate',
    Platform: 'linux',
    HostConfig: {
      // The create body's HostConfig as sent (every field in it was honored or refused at create),
      // so `docker inspect` shows the limits, binds and capabilities the container runs with.
      ...(c.body.HostConfig ?? {}),
      LogConfig: c.logging?.view ?? { Type: 'json-file', Config: {} },
      NetworkMode: c.body.HostConfig?.NetworkMode ?? 'default',
      AutoRemove: c.autoRemove,
      RestartPolicy: { Name: '', MaximumRetryCount: 0 },
    },
    Mounts: [],
    Config: {
      Hostname: c.id.slice(0, 12),
      User: c.body.User ?? '',
      AttachStdin: c.body.AttachStdin ?? false,
      AttachStdout: c.body.AttachStdout ?? false,
      AttachStderr: c.body.AttachStderr ?? false,
      Tty: c.tty,
      OpenStdin: c.openStdin,
      StdinOnce: c.body.StdinOnce ?? false,
      Env: c.env,
      Cmd: c.body.Cmd ?? c.image.cmd ?? null,
      Image: c.body.Image,
      WorkingDir: c.body.WorkingDir ?? '',
      Entrypoint: c.body.Entrypoint ?? c.image.entrypoint ?? null,
      Labels: c.labels,
    },
    // testcontainers maps `NetworkSettings.Ports` right after start; dockerd sends {} when nothing is published.
    NetworkSettings: { Ports: {}, Networks: {} },
  };
}

/** One entry of `GET /containers/json`. */
export function summaryView(c: LocalContainer, now = Date.now()): Record<string, unknown> {
  return {
    Id: c.id,
    Names: [`/${c.name}`],
    Image: c.body.Image,
    ImageID: c.image.id,
    Command: c.argv.join(' '),
    Created: Math.floor(c.created.getTime() / 1000),
    Ports: [],
    Labels: c.labels,
    State: c.paused === true && c.status === 'running' ? 'paused' : c.status,
    Status: humanStatus(c, now),
    HostConfig: { NetworkMode: c.body.HostConfig?.NetworkMode ?? 'default' },
    NetworkSettings: { Networks: {} },
    Mounts: [],
  };
}

/** The Status column of `docker ps`, worded as dockerd words it. */
function humanStatus(c: LocalContainer, now: number): string {
  switch (c.status) {
    case 'running':
      return `Up ${humanDuration(now - (c.startedAt?.getTime() ?? now))}${c.paused === true ? ' (Paused)' : ''}`;
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
