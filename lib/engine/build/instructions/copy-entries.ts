import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { pathMatch } from '../dockerfile/path-match.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { resolveInRoot } from '../../images/store/apply-layer.js';
import type { LayerEntry } from '../../images/store/layer-writer.js';

/** Where COPY reads: the build context (root-owned copies, `.dockerignore` applied) or an image's root (`--from`). */
export interface CopySource {
  root: string;
  ignored: (rel: string) => boolean;
  /** Go on into an excluded directory to judge what is below it (a `!` line may re-include it). */
  walkIgnored?: boolean;
  /** Files of the context are written as root's; an image's keep their owners. */
  context: boolean;
}

/** A COPY or ADD turned into layer entries, with the digest dockerd puts in its history (`file:…`, `dir:…`, `multi:…`). */
export interface CopyPlan {
  /**
   * The entries in order. Those marked `parent` are directories above the destination, written
   * only where the image lacks them ({@link withParents}); the digest leaves them out, so a
   * cache lookup needs no unpacked parent image.
   */
  entries: (LayerEntry & { parent?: true })[];
  /** `file:<hex>`, `dir:<hex>` or `multi:<hex>`: a digest of every entry's metadata and content (the cache key's part). */
  digest: string;
}

const GLOB = /[*?[]/;

/**
 * The entries a COPY (or ADD of local files) writes: each source (globs matched per path
 * segment, as Go's filepath.Match) at the destination (a directory when it ends in `/` or there
 * are several sources; a directory's contents go into it), the destination's missing parent
 * directories first, owners from `chown` or else root's for context files. `expandArchive`
 * (ADD) is asked for each regular file; an archive it expands is copied as its contents.
 */
export async function copyEntries(options: {
  source: CopySource;
  sources: string[];
  dest: string;
  keyword: 'COPY' | 'ADD';
  chown?: { uid: number; gid: number };
  expandArchive?: (file: string) => Promise<string | undefined>;
}): Promise<CopyPlan> {
  const { source, keyword } = options;
  const matched: string[] = [];
  for (const pattern of options.sources) {
    const clean = posix.normalize(`/${pattern}`).slice(1).replace(/\/+$/, '');
    if (GLOB.test(clean)) {
      const all = await listAll(source, '');
      const hits = all.filter((rel) => pathMatch(clean, rel) && !source.ignored(rel));
      if (hits.length === 0) throw notFound(keyword, pattern, source);
      matched.push(...hits);
    } else {
      if (clean !== '' && source.ignored(clean)) throw notFound(keyword, pattern, source);
      const info = await lstat(await resolveInRoot(source.root, clean || '.')).catch(() => undefined);
      if (!info) throw notFound(keyword, pattern, source);
      matched.push(clean);
    }
  }
  const destIsDir = options.dest.endsWith('/') || matched.length > 1;
  const dest = posix.normalize(options.dest).replace(/\/$/, '') || '/';
  const entries: (LayerEntry & { parent?: true })[] = [];
  const owner = (uid: number, gid: number) => options.chown ?? (source.context ? { uid: 0, gid: 0 } : { uid, gid });
  const add = async (entry: LayerEntry): Promise<void> => {
    entries.push(entry);
  };
  const made = new Set<string>();
  const parents = async (path: string): Promise<void> => {
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (made.has(dir)) continue;
      made.add(dir);
      entries.push({ header: { name: `${dir}/`, type: 'directory', mode: 0o755, uid: 0, gid: 0, mtime: new Date(0) }, parent: true });
    }
  };
  // `known`: the host path when the caller already resolved it (a child of a real directory, read
  // with lstat and never followed, needs no second resolution).
  // `excluded`: a directory .dockerignore excludes, walked only for what a `!` line re-includes below it.
  const one = async (root: string, rel: string, target: string, known?: string, excluded = false): Promise<void> => {
    const host = known ?? (await resolveInRoot(root, rel || '.'));
    const info = await lstat(host);
    if (excluded && !info.isDirectory()) return;
    const { uid, gid } = owner(info.uid, info.gid);
    const name = target.replace(/^\/+/, '');
    const base = { mode: info.mode & 0o7777, uid, gid, mtime: info.mtime };
    if (info.isDirectory()) {
      if (name !== '' && !excluded) {
        await parents(name);
        made.add(name);
        await add({ header: { ...base, name: `${name}/`, type: 'directory' } });
      }
      for (const child of (await readdir(host)).sort()) {
        const childRel = rel === '' ? child : `${rel}/${child}`;
        const skip = root === source.root && source.ignored(childRel);
        if (skip && !source.walkIgnored) continue;
        await one(root, childRel, posix.join(target, child), posix.join(host, child), skip);
      }
      return;
    }
    await parents(name);
    if (info.isSymbolicLink()) await add({ header: { ...base, name, type: 'symlink', linkname: await readlink(host) } });
    else if (info.isFile()) await add({ header: { ...base, name, type: 'file', size: info.size }, source: host });
  };
  let kind = matched.length > 1 ? 'multi' : 'file';
  for (const rel of matched) {
    const host = await resolveInRoot(source.root, rel || '.');
    const info = await lstat(host);
    if (info.isDirectory()) {
      if (matched.length === 1) kind = 'dir';
      await one(source.root, rel, dest);
      continue;
    }
    const expanded = info.isFile() && options.expandArchive ? await options.expandArchive(host) : undefined;
    if (expanded !== undefined) {
      if (matched.length === 1) kind = 'dir';
      // ADD: an archive's contents go into the destination directory, with the archive's owners.
      for (const child of (await readdir(expanded)).sort()) await one(expanded, child, posix.join(dest, child));
      continue;
    }
    await one(source.root, rel, destIsDir ? posix.join(dest, posix.basename(rel)) : dest);
  }
  // The digest: every entry's metadata and content, in order (the files hashed a few at a time).
  const contents = await mapLimit(entries, 8, async (e) => (e.source !== undefined ? fileDigest(e.source) : ''));
  const hash = createHash('sha256');
  for (const [i, entry] of entries.entries()) {
    if (entry.parent) continue;
    const h = entry.header;
    hash.update(`${h.name}\0${h.type}\0${h.mode}\0${h.uid}:${h.gid}\0${h.linkname ?? ''}\0${h.size ?? 0}\0${contents[i]}`);
  }
  return { entries, digest: `${kind}:${hash.digest('hex')}` };
}

async function listAll(source: CopySource, rel: string): Promise<string[]> {
  const host = await resolveInRoot(source.root, rel || '.');
  const out: string[] = [];
  for (const name of (await readdir(host).catch(() => [] as string[])).sort()) {
    const childRel = rel === '' ? name : `${rel}/${name}`;
    out.push(childRel);
    if ((await lstat(posix.join(host, name)).catch(() => undefined))?.isDirectory()) out.push(...(await listAll(source, childRel)));
  }
  return out;
}

function notFound(keyword: string, pattern: string, source: CopySource): EngineError {
  return source.context
    ? EngineError.invalidParameter(`${keyword} failed: file not found in build context or excluded by .dockerignore: stat ${pattern}: file does not exist`)
    : EngineError.invalidParameter(`${keyword} failed: stat ${pattern}: file does not exist`);
}

async function fileDigest(path: string): Promise<string> {
  // Small files (most of a context) in one read; large ones streamed.
  if ((await stat(path)).size <= 1024 * 1024) return createHash('sha256').update(await readFile(path)).digest('hex');
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The plan's entries for a layer on `parentRoot` (the unpacked image built on, undefined for
 * scratch): a parent directory only where the image has none, so an existing directory keeps
 * its owner and mode, as dockerd's copy leaves them.
 */
export async function withParents(plan: CopyPlan, parentRoot: string | undefined): Promise<LayerEntry[]> {
  const out: LayerEntry[] = [];
  for (const entry of plan.entries) {
    if (entry.parent && parentRoot) {
      const exists = await lstat(await resolveInRoot(parentRoot, entry.header.name.replace(/\/$/, ''))).catch(() => undefined);
      if (exists) continue;
    }
    out.push({ header: entry.header, ...(entry.source !== undefined ? { source: entry.source } : {}) });
  }
  return out;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
