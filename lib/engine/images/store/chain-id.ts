import { sha256Of } from './digest.js';

/** OCI image-spec config.md ChainID: ChainID(L0) = DiffID(L0); ChainID(Ln) = sha256(ChainID(Ln-1) + " " + DiffID(Ln)). */
export function chainIds(diffIds: readonly string[]): string[] {
  const out: string[] = [];
  for (const diffId of diffIds) out.push(out.length === 0 ? diffId : sha256Of(`${out[out.length - 1] as string} ${diffId}`));
  return out;
}
