/**
 * The command line that starts slirp4netns with `args`.
 *
 * With `--enable-sandbox` (a root server), slirp4netns 1.2 unshares a mount namespace, marks only
 * `/` private (not recursively), pivots into a tmpfs and detaches the old root. Every other mount
 * it copied from the host stays in its host peer group, so that detach propagates back: the host
 * loses each mount below a shared mount point, such as dockerd's overlay2 `merged` roots under its
 * shared /var/lib/docker (a container of dockerd's starting at that moment finds an empty root:
 * `exec: "sleep": executable file not found in $PATH`). It is therefore started in a mount
 * namespace of its own whose mounts are all slaves of the host's (util-linux `unshare --mount
 * --propagation slave`): its detach propagates nowhere, while the host's unmounts still reach the
 * copies it holds until it pivots.
 */
export function slirpCommand(binary: string, args: readonly string[], unshare = 'unshare'): [string, string[]] {
  if (!args.includes('--enable-sandbox')) return [binary, [...args]];
  return [unshare, ['--mount', '--propagation', 'slave', '--', binary, ...args]];
}
