/** An OCI platform (image-index.md `platform`). */
export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

/** Node's `process.arch` in GOARCH words, as registries name architectures. */
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** This server's platform (`linux/amd64`), the one a pull picks when the client names none. */
export function serverPlatform(): string {
  return `${process.platform}/${GOARCH[process.arch] ?? process.arch}`;
}

/** Parses `os[/arch[/variant]]` (the `platform` pull parameter); a missing arch is the server's. */
export function parsePlatform(text: string, fallback: string = serverPlatform()): Platform {
  const [os, arch, variant] = text.toLowerCase().split('/');
  const [, fallbackArch] = fallback.split('/');
  if (!os || text.split('/').length > 3) throw new TypeError(`invalid platform: ${text}`);
  return { os, architecture: arch || (fallbackArch as string), ...(variant ? { variant } : {}) };
}

/** `os/arch[/variant]`. */
export const formatPlatform = (p: Platform): string => [p.os, p.architecture, p.variant].filter(Boolean).join('/');

/**
 * Whether an index entry's platform serves the wanted one: same OS and architecture, and the
 * variant when one is wanted (arm64 entries without a variant are v8, as containerd's matcher
 * normalizes them).
 */
export function platformMatches(entry: Platform | undefined, wanted: Platform): boolean {
  if (!entry) return false;
  if (entry.os !== wanted.os || entry.architecture !== wanted.architecture) return false;
  if (!wanted.variant) return true;
  const variant = entry.variant ?? (entry.architecture === 'arm64' ? 'v8' : undefined);
  return variant === wanted.variant;
}
