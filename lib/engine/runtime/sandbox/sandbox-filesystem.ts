import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import { containerSpecOf } from '../../../engine-api/container-spec.js';
import { changesLayer } from '../../images/store/changes-layer.js';
import { hostPathOf } from '../local/container-mounts.js';
import { diffTrees, sizeOfChanges } from '../local/diff-trees.js';
import type { ExecutorFilesystem, LocalContainer } from '../local/local-container.js';
import { HeldBinds } from './held-binds.js';
import { copyImagePath } from './image-path-copy.js';
import { offlineEtcFiles } from './network/etc-files.js';
import { overlayChanges } from './overlay-changes.js';
import { exportRootfs } from './sandbox-export.js';
import { runOnRootfs } from './sandbox-offline.js';
import type { SandboxState } from './sandbox-state.js';
import { prepareSeccomp } from './seccomp/container-seccomp.js';
import type { Enter } from './userns/sandbox-userns.js';
import { NamespaceReader, retryDenied } from './userns/ns-reader.js';

/**
 * Each container's own root filesystem (its overlay or copy, sandbox-rootfs.ts): diff, commit,
 * export, `docker cp` on a container that is not running (a running one has tar and stat run
 * inside it, local-archive.ts) and a volume's first content.
 */
export class SandboxFilesystem implements ExecutorFilesystem {
  /** Rootless with a mapped range: reads the server's user is refused, done again inside the namespace (userns/ns-reader.ts). */
  private readonly nsReader: NamespaceReader | undefined;

  constructor(private readonly state: SandboxState) {
    this.nsReader = state.mapped ? NamespaceReader.of(state.mapped) : undefined;
  }

  /** A volume's first content: what the container's root filesystem copy (made from the image, ids mapped) has there. */
  async copyImagePath(c: LocalContainer, path: string, into: string): Promise<void> {
    return copyImagePath(await this.state.rootfs.ensure(c), path, into);
  }

  /**
   * `docker commit` and a build's RUN: the changes as a layer, owners moved back out of the user
   * namespace's range so the image holds the ids the container saw (changes-layer.ts).
   */
  async commitLayer(c: LocalContainer, changes: Parameters<ExecutorFilesystem['commitLayer']>[1], opened: Parameters<ExecutorFilesystem['commitLayer']>[2]): ReturnType<ExecutorFilesystem['commitLayer']> {
    if (!opened.storeLayer) throw EngineError.unsupported('making layers', 'sandbox');
    const { mapped, rootlessMap } = this.state;
    const rootfs = await this.state.rootfs.ensure(c);
    const { nsReader } = this;
    // Rootless, a file the server's user may not read (a 0700 directory of a range id) is read again inside the namespace (userns/ns-reader.ts).
    return retryDenied(() => opened.storeLayer!(changesLayer(rootfs, changes, this.state.usernsOf(c.spec)?.map ?? mapped?.mappingOf(mapped.indexOf(c.spec.labels)) ?? rootlessMap)),
      nsReader && (() => opened.storeLayer!(nsReader.layer(rootfs, changes, mapped!.indexOf(c.spec.labels)))));
  }

  /** `docker diff`: an overlay's upper layer against the image's tree (overlay-changes.ts), a copy against the whole tree (diff-trees.ts). */
  async changes(c: LocalContainer): ReturnType<ExecutorFilesystem['changes']> {
    const { images, rootfs, overlays, mapped } = this.state;
    const opened = images.store ? await images.store : undefined;
    if (!opened?.imageRootfs) return [];
    const writable = rootfs.writableOf(c.id);
    const map = this.state.usernsOf(c.spec)?.map;
    // A rootless owner's copy has its owners moved into the owner's block: compared as moved.
    const moved = mapped?.copyOwner(mapped.indexOf(c.spec.labels));
    const image = writable.copy && existsSync(writable.path) ? await opened.imageRootfs(c.image.id, map) : undefined;
    const { nsReader } = this;
    if (writable.copy) return image ? retryDenied(() => diffTrees(image, writable.path, moved), nsReader && (() => nsReader.diff(image, writable.path, mapped!.indexOf(c.spec.labels)))) : [];
    if (!overlays || !(await overlays.exists(c.id))) return [];
    const merged = await rootfs.ensure(c);
    // Against the plain tree (the lowest layer) with owners moved by the range: what the range's layer holds.
    const plain = (await rootfs.lowerOf(opened, c, map)).split(':').at(-1)!;
    return overlayChanges(plain, writable.path, merged, map);
  }

  /** What the container wrote: in its upper layer (or copy), each added or modified path is there. */
  sizeOfChanges(c: LocalContainer, changes: Parameters<ExecutorFilesystem['sizeOfChanges']>[1]): Promise<number> {
    return sizeOfChanges(this.state.rootfs.writableOf(c.id).path, changes);
  }

  /**
   * `docker cp` on a created or exited container: the image's tar in a fresh sandbox on its root,
   * its volumes and binds mounted. The sources are walked and held as at a start (held-binds.ts) until the copy ends.
   */
  async copyOffline(c: LocalContainer, argv: string[], stdin: boolean, output: (stream: 1 | 2, data: Buffer) => void): ReturnType<ExecutorFilesystem['copyOffline']> {
    const { containersDir, settings } = this.state;
    const userns = this.state.usernsOf(c.spec);
    const rootfs = await this.state.rootfs.ensure(c);
    // Its network files (network/etc-files.ts) first: a bind of the container's own at one of those paths wins.
    // (A root whose /etc is a link gets none: its start refuses it, a copy still works.)
    const etcFiles = await offlineEtcFiles(c.id, c.spec, join(containersDir, c.id), rootfs, userns ? { uid: userns.map.uid, gid: userns.map.gid } : undefined).catch(() => ({}));
    const mounts = (c.mounts ?? []).filter((m) => m.Type !== 'tmpfs').map((m) => ({ source: hostPathOf(m), target: m.Destination, readOnly: !m.RW }));
    const binds = [...Object.entries(etcFiles).filter(([path]) => !mounts.some((m) => m.target === path)).map(([target, source]) => ({ source, target, readOnly: false })), ...mounts]
      .sort((a, b) => a.target.split('/').length - b.target.split('/').length);
    const held = await HeldBinds.open(binds);
    try {
      const proc = await runOnRootfs({
        bwrap: settings.bwrap, rootfs, argv, stdin, output,
        binds: userns ? binds.map((b) => ({ ...b, source: held.path(b.source) })) : binds,
        // As the container's root in its owner's namespace: copied files get the mapped owners.
        ...(await this.rootEnter(c)),
        // The copy's own filter: Docker's profile with its capabilities (no CapAdd of the container applies).
        ...(settings.seccomp ? { seccompFile: prepareSeccomp(containerSpecOf({ Image: c.image.id }), join(containersDir, c.id, 'seccomp-copy.bpf')) } : {}),
      });
      return { ...proc, exited: proc.exited.finally(() => held.close()) };
    } catch (error) {
      await held.close();
      throw error;
    }
  }

  /** `docker export`: the host's GNU tar over the root filesystem copy, in a sandbox of its own (sandbox-export.ts). */
  async exportRootfs(c: LocalContainer, signal: AbortSignal): ReturnType<ExecutorFilesystem['exportRootfs']> {
    // Read as the container's root in its owner's namespace: the owners come out unshifted.
    return exportRootfs({ bwrap: this.state.settings.bwrap, rootfs: await this.state.rootfs.ensure(c), signal, ...(await this.rootEnter(c)) });
  }

  /** How to enter as the container's root: its owner's user namespace, or the rootless server's mapped one; none without either. */
  private async rootEnter(c: LocalContainer): Promise<{ enter?: Enter }> {
    const { mapped } = this.state;
    const userns = this.state.usernsOf(c.spec);
    if (userns) return { enter: await userns.enter({ uid: 0, gid: 0 }) };
    return mapped ? { enter: await mapped.enter({ uid: 0, gid: 0 }, mapped.indexOf(c.spec.labels)) } : {};
  }
}
