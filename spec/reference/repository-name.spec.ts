import { describe, expect, test } from '@jest/globals';
import { isDomain, isPathComponent, splitRepositoryName } from '../../lib/reference/repository-name.js';

describe('a repository name is [domain/]component[/component…], as distribution/reference splits it', () => {
  test.each([
    ['library/busybox', undefined, ['library', 'busybox']],
    ['busybox', undefined, ['busybox']],
    ['localhost/app', 'localhost', ['app']],
    ['localhost:5000/team/app', 'localhost:5000', ['team', 'app']],
    ['registry.example.com/app', 'registry.example.com', ['app']],
    ['MyHost/app', 'MyHost', ['app']],
    ['[::1]:5000/app', '[::1]:5000', ['app']],
  ])('%s', (name, domain, components) => {
    expect(splitRepositoryName(name)).toEqual({ domain, components });
  });
  test('domains and components are validated separately', () => {
    expect(isDomain('localhost:5000')).toBe(true);
    expect(isDomain('-bad.example')).toBe(false);
    expect(isPathComponent('my_app.v2-x')).toBe(true);
    expect(isPathComponent('App')).toBe(false);
    expect(isPathComponent('a..b')).toBe(false);
  });
});
