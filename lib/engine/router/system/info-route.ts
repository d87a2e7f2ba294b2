import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname, machine, release, totalmem } from 'node:os';
import type { Router } from 'express';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { ownedFilters } from '../http/checkpoint.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { apiVersionLessThan } from '../../../engine-api/api-version.js';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';

/**
 * dockerd's own per-version adjustments of `GET /info` (api/server/router/system getInfo):
 * before 1.25 the removed `ExecutionDriver` reads `<not supported>`; before 1.39 an unknown
 * kernel or OS reads `<unknown>` instead of ""; from 1.42 `KernelMemory` is left out. Fields
 * added later (Warnings 1.39, CgroupVersion 1.41…) are not stripped for older clients: dockerd
 * sends them at every version.
 */
export function infoForVersion(info: Record<string, unknown>, version: string): Record<string, unknown> {
  const out = { ...info };
  if (apiVersionLessThan(version, '1.25')) out.ExecutionDriver = '<not supported>';
  if (apiVersionLessThan(version, '1.39')) {
    if (out.KernelVersion === '') out.KernelVersion = '<unknown>';
    if (out.OperatingSystem === '') out.OperatingSystem = '<unknown>';
  }
  if (!apiVersionLessThan(version, '1.42')) {
    delete out.KernelMemory;
    delete out.KernelMemoryTCP;
  }
  return out;
}

/** The host facts `/info` reports, read once per router. */
interface HostFacts {
  ID: string;
  Name: string;
  NCPU: number;
  MemTotal: number;
  KernelVersion: string;
  OperatingSystem: string;
  OSVersion: string;
  Architecture: string;
}

/**
 * `GET /info`, on every runtime: container counts come from `list()`, the image count from
 * `listImages()` when the runtime has it (every image, intermediate ones too: dockerd counts its
 * whole image store, so it equals `docker images -a`' distinct IDs), host facts from the OS, and whatever the runtime's
 * optional `systemInfo()` reports is merged over that (a forwarding runtime returns the real
 * engine's answer). `ServerVersion` is always dockgate's, the version `/version` reports, since
 * clients compare the two. testcontainers calls this first; the Docker CLI for `docker info`.
 */
export function registerInfoRoute(api: Router, ctx: EngineContext): void {
  const host = hostFacts();
  const { runtime, settings } = ctx;
  api.get(
    '/info',
    engineRoute(ctx, 'system.info', async (_req, res, version) => {
      const onlyOwner = engineLocals(res).policy?.onlyOwner;
      // A forwarding runtime's answer already has the counts: ask the runtime first, count only what it left out.
      const reported = runtime.systemInfo ? await runtime.systemInfo(version) : {};
      const [counts, images] = await Promise.all([
        typeof reported.Containers === 'number' && onlyOwner === undefined ? {} : containerCounts(runtime, onlyOwner),
        typeof reported.Images === 'number' || !runtime.listImages
          ? 0
          : runtime.listImages({ all: true, filters: new Map(), digests: false, sharedSize: false, apiVersion: version }).then((l) => new Set(l.map((i) => i.Id)).size),
      ]);
      const info: Record<string, unknown> = {
        ...host,
        Images: images,
        Driver: '',
        DriverStatus: [],
        Plugins: { Volume: [], Network: [], Authorization: null, Log: [] },
        // dockgate enforces none of these limits itself; a runtime that does says so.
        MemoryLimit: false,
        SwapLimit: false,
        // dockerd sends these two up to API 1.41 (infoForVersion drops them from 1.42).
        KernelMemory: false,
        KernelMemoryTCP: false,
        CpuCfsPeriod: false,
        CpuCfsQuota: false,
        CPUShares: false,
        CPUSet: false,
        PidsLimit: false,
        OomKillDisable: false,
        IPv4Forwarding: false,
        Debug: false,
        SystemTime: new Date().toISOString(),
        LoggingDriver: 'json-file',
        CgroupDriver: 'none',
        CgroupVersion: '',
        OSType: settings.os,
        IndexServerAddress: 'https://index.docker.io/v1/',
        DockerRootDir: '',
        Labels: [],
        ExperimentalBuild: settings.experimental,
        Runtimes: {},
        DefaultRuntime: runtime.name ?? 'custom',
        Swarm: { NodeID: '', NodeAddr: '', LocalNodeState: 'inactive', ControlAvailable: false, Error: '', RemoteManagers: null },
        LiveRestoreEnabled: false,
        SecurityOptions: [],
        Warnings: null,
        ...reported,
        // After the runtime's report: a caller narrowed to its own containers gets its own counts.
        ...counts,
        ServerVersion: settings.engineVersion,
      };
      writeEngineJson(res.status(200), infoForVersion(info, version));
    }),
  );
}

async function containerCounts(runtime: ContainerRuntime, onlyOwner: string | undefined): Promise<Record<string, number>> {
  // A caller narrowed to its own containers counts those alone, whatever a forwarding runtime reported.
  const all = await runtime.list({ all: true, filters: ownedFilters(new Map(), onlyOwner) });
  const state = (c: Record<string, unknown>): unknown => c.State;
  const running = all.filter((c) => state(c) === 'running').length;
  const paused = all.filter((c) => state(c) === 'paused').length;
  return { Containers: all.length, ContainersRunning: running, ContainersPaused: paused, ContainersStopped: all.length - running - paused };
}

function hostFacts(): HostFacts {
  const osRelease = readOsRelease();
  return {
    // dockerd's engine ID is a UUID kept in its state directory; this one lives as long as the router.
    ID: randomUUID(),
    Name: hostname(),
    NCPU: availableParallelism(),
    MemTotal: totalmem(),
    KernelVersion: release(),
    // API 1.39: an empty string, not "<unknown>", when the host does not say.
    OperatingSystem: osRelease.PRETTY_NAME ?? '',
    OSVersion: osRelease.VERSION_ID ?? '',
    // dockerd reports `uname -m` here (x86_64, aarch64), unlike /version's GOARCH names.
    Architecture: machine(),
  };
}

/** /etc/os-release (os-release(5)) as key → unquoted value; empty where the host has none. */
function readOsRelease(): Record<string, string> {
  let text = '';
  try {
    text = readFileSync('/etc/os-release', 'utf8');
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1] as string] = (m[2] as string).replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}
