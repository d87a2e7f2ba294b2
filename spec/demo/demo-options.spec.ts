import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const MAIN = join(process.cwd(), 'demo/dist/main.js');
const run = (args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 15_000 });

describe('the demo command line explains itself and refuses bad flags', () => {
  test('demo/dist is built by npm test\'s pretest', () => {
    expect(existsSync(MAIN)).toBe(true);
  });
  test('--help prints every flag and exits 0', () => {
    const res = run(['--help']);
    expect(res.status).toBe(0);
    for (const flag of ['--host', '--port', '--engine-socket', '--runtime', '--docker-socket', '--key', '--cert', '--users', '--service', '--issuer', '--acl', '--api-range', '--redis', '--redis-cluster', '--engine-admins']) {
      expect(res.stdout).toContain(flag);
    }
  });
  test.each([
    [['--runtime', 'qemu'], '--runtime'],
    [['--api-range', '1.12'], '--api-range'],
    [['--port', 'http'], '--port'],
    [['--key', '/tmp/x.pem'], '--key and --cert'],
    [['--bogus'], 'bogus'],
    [['--redis-cluster', 'localhost'], '--redis-cluster'],
    [['--engine-admins', 'root,bad name'], '--engine-admins'],
    [['--redis', 'redis://127.0.0.1:6379', '--redis-cluster', '127.0.0.1:7000'], '--redis and --redis-cluster'],
  ])('%j exits 2 naming the flag', (args, name) => {
    const res = run(args);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(name);
  });
});
