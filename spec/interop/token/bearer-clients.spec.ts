/**
 * Real registry clients against a host app whose own registry routes are protected by
 * requireBearer, with dockgate's tokenRouter in the same process as the realm.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { bearerGuard, bearerOf } from '../../../lib/bearer/index.js';
import { aclAuthorizer, generateSigningKey, ownNamespaceAcl, tokenRouter, type Authenticator } from '../../../lib/index.js';
import { describeWithPeers, dockerd, program } from '../../support/peers.js';

const DOCKER = '/usr/local/bin/docker';

function run(cmd: string, args: string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { timeout: 60_000, env: { ...process.env, ...options.env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

describeWithPeers('real clients against requireBearer-protected routes with tokenRouter as realm', [program('skopeo'), program(DOCKER, ['--version']), dockerd()], () => {
  const authenticate: Authenticator = async ({ username, password }) => (username === 'alice' && password === 'pw' ? { subject: 'alice' } : null);
  const seenSubjects: string[] = [];
  let server: Server;
  let host: string;
  let dockerConfig: string;

  beforeAll(async () => {
    const key = generateSigningKey();
    const tokens = tokenRouter({
      issuer: 'dockgate-interop', service: 'bearer.interop', keys: { privateKey: key.privateKeyPem, certificateChain: key.certificatePem },
      authenticate, authorize: aclAuthorizer(ownNamespaceAcl()), throttle: false,
    });
    const app = express();
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const guard = bearerGuard({ realm: `http://${host}/token`, keys: tokens });
    app.use((_req, res, next) => {
      res.set('Docker-Distribution-API-Version', 'registry/2.0');
      next();
    });
    app.use(tokens);
    app.get('/v2/', guard([]), (_req, res) => {
      res.json({});
    });
    app.get('/v2/*name/tags/list', guard((req) => `repository:${(req.params.name as unknown as string[]).join('/')}:pull`), (req, res) => {
      seenSubjects.push(bearerOf(req).subject);
      res.json({ name: (req.params.name as unknown as string[]).join('/'), tags: ['1.0', 'latest'] });
    });
    dockerConfig = mkdtempSync(join(tmpdir(), 'dockgate-docker-config-'));
  });

  afterAll(async () => {
    rmSync(dockerConfig, { recursive: true, force: true });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('skopeo list-tags --creds alice:pw lists the tags of alice/app', async () => {
    const res = await run('skopeo', ['list-tags', '--tls-verify=false', '--creds', 'alice:pw', `docker://${host}/alice/app`]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ Repository: `${host}/alice/app`, Tags: ['1.0', 'latest'] });
    expect(seenSubjects).toContain('alice');
  });

  test('skopeo list-tags with a wrong password fails with the token server\'s refusal', async () => {
    const before = seenSubjects.length;
    const res = await run('skopeo', ['list-tags', '--tls-verify=false', '--creds', 'alice:wrong', `docker://${host}/alice/app`]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/401|unauthorized|authentication/i);
    expect(seenSubjects.length).toBe(before);
  });

  test('skopeo list-tags of another user\'s repository fails (the token grants nothing there)', async () => {
    const res = await run('skopeo', ['list-tags', '--tls-verify=false', '--creds', 'alice:pw', `docker://${host}/bob/app`]);
    expect(res.code).not.toBe(0);
  });

  test('docker login succeeds, stores the refresh token as identitytoken, and docker logout removes it', async () => {
    const env = { DOCKER_CONFIG: dockerConfig };
    const login = await run(DOCKER, ['login', host, '-u', 'alice', '--password-stdin'], { env, input: 'pw' });
    expect(login.stdout).toContain('Login Succeeded');
    expect(login.code).toBe(0);
    const config = JSON.parse(readFileSync(join(dockerConfig, 'config.json'), 'utf8')) as { auths: Record<string, { identitytoken?: string }> };
    expect(config.auths[host]?.identitytoken).toMatch(/^dgr_/);
    const logout = await run(DOCKER, ['logout', host], { env });
    expect(logout.code).toBe(0);
    const after = JSON.parse(readFileSync(join(dockerConfig, 'config.json'), 'utf8')) as { auths: Record<string, unknown> };
    expect(after.auths[host]).toBeUndefined();
  });

  test('docker login with a wrong password fails', async () => {
    const res = await run(DOCKER, ['login', host, '-u', 'alice', '--password-stdin'], { env: { DOCKER_CONFIG: dockerConfig }, input: 'wrong' });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/unauthorized|401|denied|incorrect/i);
  });
});
