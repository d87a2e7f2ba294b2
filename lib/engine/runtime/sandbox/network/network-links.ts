import { EngineError } from '../../../../engine-api/engine-error.js';

/**
 * One legacy link on a user-defined network (`--link NAME[:ALIAS]`, `HostConfig.Links`,
 * `EndpointConfig.Links`): as given (inspect shows it so, as dockerd does), its alias, and the
 * id of the container it named, resolved once (at create or connect): the alias always leads to
 * that container, never to whatever the name or prefix matches later.
 */
export interface NetworkLink {
  entry: string;
  alias: string;
  id: string;
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
 * for none, answered here as a 400 naming the field, as a bad create body is).
 */
export function resolveLinks(value: unknown, where: string, resolve: (ref: string) => string): NetworkLink[] {
  return linkEntries(value, where).map(({ entry, ref, alias }) => {
    try {
      return { entry, alias, id: resolve(ref) };
    } catch (error) {
      if (error instanceof EngineError && error.kind === 'NotFound') throw EngineError.invalidParameter(`${where}: could not get container for ${ref}: ${error.message}`);
      throw error;
    }
  });
}

/** The container a link alias leads to for the asking container's links, or undefined (aliases compare case-insensitively, as DNS names do). */
export function linkTarget(links: readonly NetworkLink[] | undefined, name: string): string | undefined {
  return links?.find((l) => l.alias.toLowerCase() === name)?.id;
}
