import { EngineError } from '../../../../engine-api/engine-error.js';

/**
 * One legacy link on a user-defined network (`--link NAME[:ALIAS]`, `HostConfig.Links`,
 * `EndpointConfig.Links`): as given (inspect shows it so, as dockerd does), its alias, and the
 * id of the container it named, resolved once (at create or connect): the alias always leads to
 * that container, never to whatever the name or prefix matches later. A link to a name no
 * container has yet (dockerd takes it on a user network) has no id: its alias answers as that
 * name does on the network, once a container there has it.
 */
export interface NetworkLink {
  entry: string;
  alias: string;
  id: string;
  /** The name, for a link made before any container had it (id ''). */
  name?: string;
}

/**
 * The `NAME[:ALIAS]` entries of a link list, checked as dockerd's ParseLink checks them (a leading
 * `/` of the name is dropped; the alias defaults to the name). Unset or null is none.
 */
export function linkEntries(value: unknown, where: string): { entry: string; ref: string; alias: string }[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((e) => typeof e !== 'string')) throw EngineError.invalidParameter(`${where}: Links must be an array of strings`);
  return (value as string[]).map((entry) => {
    const parts = entry.split(':');
    const ref = (parts[0] ?? '').replace(/^\//, '');
    const alias = parts[1] ?? ref;
    if (parts.length > 2 || ref === '' || alias === '') throw EngineError.invalidParameter(`${where}: bad format for links: ${entry}`);
    return { entry, ref, alias };
  });
}

/**
 * Resolves each entry to the id of the container it names now (`resolve` throws dockerd's 404
 * for none). On the default bridge none is a 400 naming the field (dockerd's "could not get
 * container for"); on a user network (`byName`) the link is kept by name, as dockerd keeps it.
 */
export function resolveLinks(value: unknown, where: string, resolve: (ref: string) => string, byName = false): NetworkLink[] {
  return linkEntries(value, where).map(({ entry, ref, alias }) => {
    try {
      return { entry, alias, id: resolve(ref) };
    } catch (error) {
      if (!(error instanceof EngineError && error.kind === 'NotFound')) throw error;
      if (byName) return { entry, alias, id: '', name: ref.toLowerCase() };
      throw EngineError.invalidParameter(`${where}: could not get container for ${ref}: ${error.message}`);
    }
  });
}

/**
 * What a link alias leads to for the asking container's links: a container's id, or a name to
 * look up on the network for a link made by name; undefined when no link has the alias (aliases
 * compare case-insensitively, as DNS names do).
 */
export function linkTarget(links: readonly NetworkLink[] | undefined, name: string): { id: string } | { name: string } | undefined {
  const link = links?.find((l) => l.alias.toLowerCase() === name);
  if (!link) return undefined;
  return link.id === '' && link.name !== undefined ? { name: link.name } : { id: link.id };
}
