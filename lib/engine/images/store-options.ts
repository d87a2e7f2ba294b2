import { isDomain } from '../../reference/repository-name.js';
import type { IdShift, ImageStoreOptions, ImageUsage, NamespaceOwners } from './image-store-types.js';
import { serverPlatform } from './store/platform.js';
import { optionalFunction } from '../../options/option-checks.js';

/** {@link ImageStoreOptions} with defaults applied. */
export interface ResolvedStoreOptions {
  insecureRegistries: ReadonlySet<string>;
  usage: ImageUsage;
  fetch: typeof fetch;
  platform: string;
  maxLoadBytes: number;
  maxLayerBytes: number;
  onlyRootOwners: boolean;
  namespaceOwners: NamespaceOwners | undefined;
  prepareShifts: () => readonly IdShift[];
}

const FOUR_GIB = 4 * 1024 * 1024 * 1024;

function byteCap(value: unknown, name: string): number {
  if (value === undefined) return FOUR_GIB;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new TypeError(`"${name}" must be a positive integer`);
  return value;
}

/** Defaults and validates the store's options once; a bad option throws a TypeError naming it. */
export function resolveStoreOptions(options: ImageStoreOptions): ResolvedStoreOptions {
  const insecure = options.insecureRegistries ?? [];
  if (!Array.isArray(insecure) || !insecure.every((h) => typeof h === 'string' && isDomain(h))) {
    throw new TypeError('"insecureRegistries" must be a list of registry hosts (host[:port])');
  }
  optionalFunction(options.usage, 'usage');
  optionalFunction(options.fetch, 'fetch');
  optionalFunction(options.prepareShifts, 'prepareShifts');
  const platform = options.platform ?? serverPlatform();
  if (typeof platform !== 'string' || !/^[a-z0-9]+\/[a-z0-9]+(?:\/[a-z0-9]+)?$/.test(platform)) throw new TypeError('"platform" must be os/arch[/variant]');
  return {
    insecureRegistries: new Set(insecure.map((h) => h.toLowerCase())),
    usage: options.usage ?? (() => []),
    fetch: options.fetch ?? fetch,
    platform,
    maxLoadBytes: byteCap(options.maxLoadBytes, 'maxLoadBytes'),
    maxLayerBytes: byteCap(options.maxLayerBytes, 'maxLayerBytes'),
    onlyRootOwners: options.onlyRootOwners === true,
    namespaceOwners: options.namespaceOwners,
    prepareShifts: options.prepareShifts ?? (() => []),
  };
}
