import type { LocalImage } from './local-container.js';

/** Go's GOARCH names for Node's `process.arch` (image configs carry these). */
const GOARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', s390x: 's390x', ppc64: 'ppc64le', riscv64: 'riscv64' };

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

/** One row of `GET /images/json` (types/image.Summary) for a local image. */
export function imageSummaryView(image: LocalImage, refs: string[], startedAt: Date, containers: number): Record<string, unknown> {
  const size = image.size ?? 0;
  return {
    Id: image.id,
    ParentId: '',
    RepoTags: refs,
    RepoDigests: [],
    Created: seconds(image.created ?? startedAt),
    Size: size,
    SharedSize: -1,
    VirtualSize: size,
    Labels: { ...(image.labels ?? {}) },
    Containers: containers,
  };
}

/** `GET /images/{name}/json` (types.ImageInspect) for a local image: one layer, no parent. */
export function imageInspectView(image: LocalImage, refs: string[], startedAt: Date, driver: string): Record<string, unknown> {
  const size = image.size ?? 0;
  const config = {
    Env: image.env ?? [],
    Cmd: image.cmd ?? null,
    Entrypoint: image.entrypoint ?? null,
    WorkingDir: '',
    Labels: image.labels && Object.keys(image.labels).length > 0 ? { ...image.labels } : null,
  };
  return {
    Id: image.id,
    RepoTags: refs,
    RepoDigests: [],
    Parent: '',
    Comment: '',
    Created: (image.created ?? startedAt).toISOString(),
    Container: '',
    ContainerConfig: config,
    DockerVersion: '',
    Author: '',
    Config: config,
    Architecture: GOARCH[process.arch] ?? process.arch,
    Os: process.platform === 'win32' ? 'windows' : 'linux',
    Size: size,
    VirtualSize: size,
    GraphDriver: { Name: driver, Data: null },
    RootFS: { Type: 'layers' },
    Metadata: { LastTagTime: '0001-01-01T00:00:00Z' },
  };
}

/** `GET /images/{name}/history`: a local image is one step, made by the host's configuration. */
export function imageHistoryView(image: LocalImage, refs: string[], startedAt: Date, runtime: string): Record<string, unknown>[] {
  return [
    {
      Id: image.id,
      Created: seconds(image.created ?? startedAt),
      CreatedBy: `configured in the ${runtime} runtime`,
      Tags: refs,
      Size: image.size ?? 0,
      Comment: '',
    },
  ];
}
