import { DOCKER_HUB_DOMAINS } from '../reference/repository-name.js';

/**
 * An image reference in Docker's "familiar" form, as dockerd prints it in
 * `No such image: busybox:latest`: the default registry and `library/` dropped, `:latest` added
 * when there is neither tag nor digest.
 *
 * @example
 * familiarImageRef('docker.io/library/busybox'); // 'busybox:latest'
 * familiarImageRef('busybox:local');             // 'busybox:local'
 */
export function familiarImageRef(ref: string): string {
  let name = ref.trim();
  for (const prefix of DOCKER_HUB_DOMAINS.map((domain) => `${domain}/`)) {
    if (name.startsWith(prefix)) name = name.slice(prefix.length);
  }
  if (name.startsWith('library/') && name.indexOf('/', 'library/'.length) === -1) name = name.slice('library/'.length);
  const lastSlash = name.lastIndexOf('/');
  const hasTag = name.indexOf(':', lastSlash + 1) !== -1;
  if (!hasTag && !name.includes('@')) name += ':latest';
  return name;
}
