import { constants } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';
import { mountPoint, resolvConf } from './container-network.js';
import { containerHostname, LOOPBACK_HOSTS } from './etc-names.js';
import { extraHostLines } from './extra-hosts.js';

/** The host ids a container's root has (its user namespace's), which its network files are given. */
export interface EtcOwner {
  uid: number;
  gid: number;
}

/**
 * A file of the container's state directory (the server's), written whole and given to the
 * container's root: dockerd's /etc/hosts and /etc/resolv.conf are root's inside, not `nobody`'s
 * as a file of the host's root shows in a user namespace. An existing file keeps its inode (a
 * running container's bind follows it). Never a link: O_NOFOLLOW.
 */
export async function writeEtcFile(file: string, text: string, owner?: EtcOwner): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    await handle.writeFile(text);
    if (owner) await handle.chown(owner.uid, owner.gid);
  } finally {
    await handle.close();
  }
}

/**
 * /etc/hostname, /etc/hosts and /etc/resolv.conf of a container that does not join another's
 * network namespace, written in its state directory `dir` and bound over its root (container
 * path → host file; a path the image has as a directory is left alone), as dockerd makes them
 * in every network mode: its own network's files start as the loopback names and the DNS
 * forwarder (the network stage writes its address and networks' DNS in the same files); `none`
 * has the loopback names and the host's search options; `host` the host's hosts and resolv.conf.
 * ExtraHosts' lines follow the loopback names (the host's hosts file in `host` mode).
 */
export async function writeEtcFiles(id: string, spec: ContainerSpec, dir: string, rootfs: string, owner?: EtcOwner, keepExisting = false): Promise<Record<string, string>> {
  const mode = spec.host.networkMode;
  const name = containerHostname(id, spec);
  const hostFile = async (path: string, fallback: string): Promise<string> => readFile(path, 'utf8').catch(() => fallback);
  const texts: [string, string][] = [['/etc/hostname', `${name}\n`]];
  const extra = extraHostLines(spec).map((line) => `${line}\n`).join('');
  if (mode === 'host') {
    const hosts = await hostFile('/etc/hosts', `${LOOPBACK_HOSTS.join('\n')}\n`);
    texts.push(['/etc/hosts', `${hosts}${hosts === '' || hosts.endsWith('\n') ? '' : '\n'}${extra}`], ['/etc/resolv.conf', await hostFile('/etc/resolv.conf', '')]);
  } else {
    texts.push(['/etc/hosts', `${LOOPBACK_HOSTS.join('\n')}\n${extra}`], ['/etc/resolv.conf', resolvConf([], mode !== 'none')]);
  }
  const files: Record<string, string> = {};
  for (const [path, text] of texts) {
    if (!(await mountPoint(rootfs, path, owner))) continue;
    const file = join(dir, path.slice('/etc/'.length));
    const exists = keepExisting && (await stat(file).catch(() => undefined))?.isFile() === true;
    if (!exists) await writeEtcFile(file, text, owner);
    files[path] = file;
  }
  return files;
}

/**
 * The files a copy into or out of a stopped container (`docker cp`, archive GET and PUT) sees at
 * /etc/hostname, /etc/hosts and /etc/resolv.conf, as dockerd has them from its create on: those
 * of its last start, or made now with what a start begins with. None when it joins another
 * container's network namespace (that one's files are only known while both run).
 */
export async function offlineEtcFiles(id: string, spec: ContainerSpec, dir: string, rootfs: string, owner?: EtcOwner): Promise<Record<string, string>> {
  if (spec.host.networkMode.startsWith('container:')) return {};
  return writeEtcFiles(id, spec, dir, rootfs, owner, true);
}
