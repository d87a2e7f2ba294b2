import { afterAll, expect, test } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tarOf, tenantSandbox } from './support.js';

const engine = tenantSandbox('dockgate-iso-build');
const host = mkdtempSync(join(tmpdir(), 'dockgate-host-'));
afterAll(() => rmSync(host, { recursive: true, force: true }));
const build = (tar: Buffer) => engine.call('bob', 'POST', '/build?rm=1', tar);

describeWithPeers('a build context never writes, chmods or reads a host file through a link it holds', [bwrap], () => {
  test('a link `evil -> HOST/victim` then a file `evil`: the host file keeps its bytes and mode', async () => {
    const victim = join(host, 'victim');
    writeFileSync(victim, 'host bytes\n', { mode: 0o600 });
    const answer = await build(await tarOf([{ name: 'evil', type: 'symlink', linkname: victim }, { name: 'evil', body: 'tenant bytes\n', mode: 0o4777 }, { name: 'Dockerfile', body: 'FROM busybox\n' }]));
    expect(answer.status).toBeLessThan(500);
    expect(readFileSync(victim, 'utf8')).toBe('host bytes\n');
    expect(statSync(victim).mode & 0o7777).toBe(0o600);
  });

  test('a link `d -> HOST/dir` then a directory entry `d/` of mode 0777: the host directory keeps its mode', async () => {
    const dir = join(host, 'dir');
    mkdirSync(dir);
    chmodSync(dir, 0o700);
    const answer = await build(await tarOf([{ name: 'd', type: 'symlink', linkname: dir }, { name: 'd/', type: 'directory', mode: 0o777 }, { name: 'Dockerfile', body: 'FROM busybox\n' }]));
    expect(answer.status).toBeLessThan(500);
    expect(statSync(dir).mode & 0o7777).toBe(0o700);
  });

  test('an entry below a link to a host directory is a 400 naming it, and nothing is written there', async () => {
    const dir = join(host, 'below');
    mkdirSync(dir);
    const answer = await build(await tarOf([{ name: 'up', type: 'symlink', linkname: dir }, { name: 'up/planted', body: 'x' }, { name: 'Dockerfile', body: 'FROM busybox\n' }]));
    expect({ status: answer.status, message: answer.json?.message }).toEqual({ status: 400, message: expect.stringMatching(/^invalid build context: up\/planted: the entry is below a symbolic link/) });
    expect(() => statSync(join(dir, 'planted'))).toThrow();
  });

  test('a Dockerfile that is a link to a host file is not read: the host file\'s text is in no answer', async () => {
    const secret = join(host, 'secret');
    writeFileSync(secret, 'SECRET-MARKER-7f3a\n', { mode: 0o600 });
    const answer = await build(await tarOf([{ name: 'Dockerfile', type: 'symlink', linkname: secret }]));
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).not.toContain('SECRET-MARKER');
  });

  test('a .dockerignore that is a FIFO-free link to /dev/zero does not hold the server: the build answers', async () => {
    const answer = await build(await tarOf([{ name: '.dockerignore', type: 'symlink', linkname: '/dev/zero' }, { name: 'Dockerfile', body: 'FROM busybox\n' }]));
    expect(answer.status).toBeLessThan(500);
  });
});

describeWithPeers('a malformed context is a 400 naming what is wrong, never a 500', [bwrap], () => {
  test('a gzip stream that breaks off is a 400', async () => {
    const gz = gzipSync(await tarOf([{ name: 'Dockerfile', body: 'FROM busybox\n' }]));
    const answer = await build(Buffer.concat([gz.subarray(0, 20), Buffer.alloc(64, 0x41)]));
    expect({ status: answer.status, message: answer.json?.message }).toEqual({ status: 400, message: expect.stringMatching(/^invalid build context: /) });
  });

  test('a hard link to an absolute path is a 400 naming the entry', async () => {
    const answer = await build(await tarOf([{ name: 'h', type: 'link', linkname: '/etc/passwd' }, { name: 'Dockerfile', body: 'FROM busybox\n' }]));
    expect({ status: answer.status, message: answer.json?.message }).toEqual({ status: 400, message: expect.stringMatching(/^invalid build context: .*h/) });
  });
});
