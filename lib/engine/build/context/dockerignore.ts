import { posix } from 'node:path';
import dockerignoreModule from '@balena/dockerignore';

/** The package is CommonJS (`module.exports = factory`) with ESM-style types: the default import is the factory. */
const ignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;

/**
 * The `.dockerignore` filter of a build context, with Docker's rules (moby's fileutils
 * PatternMatcher: `*`, `?`, `[…]` per path segment, `**` across segments, `!` re-including, the
 * last matching line deciding, leading `/` and `./` dropped, a directory's exclusion covering what
 * is below it): @balena/dockerignore implements exactly these, and dockerode uses it, so the
 * builder and the Node clients agree on what a context holds.
 *
 * @example
 * dockerignore('*.log\n!keep.log')('a.log'); // true (ignored)
 */
export function dockerignore(text: string): (rel: string) => boolean {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.length === 0) return () => false;
  const matcher = ignore().add(lines);
  return (rel: string) => {
    const clean = posix.normalize(`/${rel}`).replace(/^\/+/, '').replace(/\/+$/, '');
    return clean !== '' && matcher.ignores(clean);
  };
}

/**
 * Whether a `.dockerignore` has `!` lines: something below an excluded directory may be
 * re-included (docker-py's test_build_with_dockerignore: `ignored` then
 * `!ignored/subdir/excepted-file`), so a walk goes on into excluded directories and judges each
 * entry below them, as moby's PatternMatcher walk does.
 */
export function reincludes(text: string): boolean {
  return text.split(/\r?\n/).some((l) => l.trim().startsWith('!'));
}
