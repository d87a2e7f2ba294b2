import { describe, test, expect } from '@jest/globals';
import { dockerignore } from '../../../lib/engine/build/context/dockerignore.js';
import { pathMatch } from '../../../lib/engine/build/dockerfile/path-match.js';

describe('.dockerignore: Docker\'s pattern rules (@balena/dockerignore)', () => {
  const ignored = dockerignore('# comment\napp/secret*\n**/*.log\n!app/keep.log\n/tmp\n./build/out\n');
  test('a pattern matches per segment: app/secret* ignores app/secret.txt, not app/x/secret.txt', () => {
    expect(ignored('app/secret.txt')).toBe(true);
    expect(ignored('app/x/secret.txt')).toBe(false);
  });
  test('** crosses directories', () => {
    expect(ignored('a/b/c.log')).toBe(true);
    expect(ignored('top.log')).toBe(true);
  });
  test('! re-includes (the last matching line decides)', () => expect(ignored('app/keep.log')).toBe(false));
  test('leading / and ./ are dropped; an ignored directory covers what is below it', () => {
    expect(ignored('tmp/x')).toBe(true);
    expect(ignored('build/out/a')).toBe(true);
  });
  test('paths are compared normalized (app//x.log, ./app/keep.log)', () => {
    expect(ignored('app//x.log')).toBe(true);
    expect(ignored('./app/keep.log')).toBe(false);
  });
  test('an empty file ignores nothing', () => expect(dockerignore('\n# only a comment\n')('anything')).toBe(false));
});

describe('COPY sources match as Go\'s filepath.Match: * and ? stay within a segment, no braces', () => {
  test.each([
    ['*.txt', 'a.txt', true], ['*.txt', 'd/a.txt', false], ['d/*.txt', 'd/a.txt', true], ['?.txt', 'ab.txt', false],
    ['[ab].txt', 'b.txt', true], ['[^ab].txt', 'b.txt', false], ['{a,b}.txt', 'a.txt', false], ['a\\*', 'a*', true],
  ])('%s vs %s → %s', (pattern, path, out) => expect(pathMatch(pattern, path)).toBe(out));
});
