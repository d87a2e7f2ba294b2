import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

let loaded: typeof PromClient | undefined;

/**
 * prom-client, loaded the first time a router is given the `metrics` option. The option is
 * resolved synchronously, at construction, so this is a CommonJS require (prom-client is
 * CommonJS); a host that never asks for metrics never loads it, and the root entry stays light.
 */
export function promClient(): typeof PromClient {
  loaded ??= createRequire(import.meta.url)('prom-client') as typeof PromClient;
  return loaded;
}
