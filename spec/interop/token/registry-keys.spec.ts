/**
 * Registry 2.8 finds the key of a token through `x5c` (chain checked against rootcertbundle) or,
 * without it, through `kid` looked up among the libtrust ids of the bundle's certificate keys
 * (reference token-auth.md §2). Each key shape a host may configure is checked end to end with
 * skopeo, the quickest real client: a push (copy from dockerd) and an inspect.
 */
import { expect, test } from '@jest/globals';
import { decodeProtectedHeader } from 'jose';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import {
  generateSigningKey, htpasswdAuthenticator, htpasswdLine, aclAuthorizer, ownNamespaceAcl,
  type GenerateSigningKeyOptions, type SigningKeyInput,
} from '../../../lib/index.js';
import { runProgram, startRegistry, startTokenServer, type ProgramResult, type RunningRegistry, type RunningTokenServer } from '../support/index.js';

const SERVICE = 'registry.dockgate.test';
const ISSUER = 'dockgate-interop';
const PASSWORD = 'key shapes';
const CREDS = `alice:${PASSWORD}`;

interface Variant {
  name: string;
  key: GenerateSigningKeyOptions;
  /** Send the certificate as `x5c`; without it the registry must find the key by `kid`. */
  x5c: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'RSA 2048 (RS256) with x5c', key: { type: 'rsa', modulusLength: 2048 }, x5c: true },
  { name: 'EC P-256 (ES256) with only a libtrust kid', key: { type: 'ec' }, x5c: false },
  { name: 'RSA 2048 (RS256) with only a libtrust kid', key: { type: 'rsa', modulusLength: 2048 }, x5c: false },
];

const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

function expectSuccess(r: ProgramResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}

/** A token server signing with `keys` and a registry trusting `trustedCertPem`; closed after `body`. */
async function withPair(keys: SigningKeyInput, trustedCertPem: string, body: (token: RunningTokenServer, registry: RunningRegistry) => Promise<void>): Promise<void> {
  const token = await startTokenServer({
    issuer: ISSUER,
    service: SERVICE,
    keys,
    authenticate: htpasswdAuthenticator({ content: await htpasswdLine('alice', PASSWORD, 4) }),
    authorize: aclAuthorizer(ownNamespaceAcl()),
  });
  try {
    const registry = await startRegistry({ service: SERVICE, issuer: ISSUER, realm: token.realm, certPem: trustedCertPem });
    try {
      await body(token, registry);
    } finally {
      await registry.stop();
    }
  } finally {
    await token.stop();
  }
}

/** The protected header of a token fetched the way skopeo fetches it (GET + Basic). */
async function tokenHeader(token: RunningTokenServer): Promise<Record<string, unknown>> {
  const url = `${token.realm}?service=${SERVICE}&scope=repository:alice/bb:pull`;
  const res = await fetch(url, { headers: { authorization: `Basic ${Buffer.from(CREDS).toString('base64')}` } });
  expect(res.status).toBe(200);
  return decodeProtectedHeader(((await res.json()) as { token: string }).token);
}

const copyToRegistry = (registry: RunningRegistry) => runProgram('skopeo', [
  'copy', '--quiet', '--dest-tls-verify=false', '--dest-creds', CREDS, 'docker-daemon:busybox:local', `docker://${registry.host}/alice/bb:1`,
], { timeoutMs: 60_000 });

const inspect = (registry: RunningRegistry) =>
  runProgram('skopeo', ['inspect', '--tls-verify=false', '--creds', CREDS, `docker://${registry.host}/alice/bb:1`]);

describeWithPeers('registry 2.8 verifies tokens signed with each supported key shape', [
  dockerd(), program('docker-registry', ['--version']), program('skopeo'), dockerImage('busybox:local'),
], () => {
  test.each(VARIANTS)('$name: skopeo pushes and inspects alice/bb:1', async ({ key, x5c }) => {
    const { privateKeyPem, certificatePem } = generateSigningKey(key);
    const keys: SigningKeyInput = x5c ? { privateKey: privateKeyPem, certificateChain: certificatePem } : { privateKey: privateKeyPem };
    await withPair(keys, certificatePem, async (token, registry) => {
      const header = await tokenHeader(token);
      expect(header).toMatchObject({ alg: key.type === 'rsa' ? 'RS256' : 'ES256', kid: token.router.tokenService.keyRing.signer.kid });
      expect('x5c' in header).toBe(x5c);
      expectSuccess(await copyToRegistry(registry));
      const result = await inspect(registry);
      expectSuccess(result);
      expect(JSON.parse(result.stdout)).toMatchObject({ Name: `${registry.host}/alice/bb` });
    });
  });

  test('a kid-only token from a key whose certificate is not in rootcertbundle is refused by the registry', async () => {
    const signer = generateSigningKey();
    const other = generateSigningKey();
    await withPair({ privateKey: signer.privateKeyPem }, other.certificatePem, async (token, registry) => {
      const result = await inspect(registry);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/unauthorized|authentication required/i);
      // The token service did issue a token: the refusal is the registry's signature check.
      expect(token.events).toContainEqual(expect.objectContaining({ type: 'token.issued', grant: 'basic', granted: 'repository:alice/bb:pull' }));
    });
  });
});
