/**
 * The package as users install it: the built entry point (what `import … from 'dockgate'`
 * resolves to through package.json "exports") holds exactly the documented API, with types.
 */
import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  type: string; exports: Record<string, { types: string; default: string }>; bin: Record<string, string>; engines: { node: string }; files: string[];
};

const PUBLIC_API = [
  // token service
  'tokenRouter', 'OAuthError', 'signAccessToken', 'MemoryRefreshTokenStore', 'RedisRefreshTokenStore', 'redisRefreshTokenStore',
  'generateRefreshToken', 'refreshTokenId', 'htpasswdAuthenticator', 'htpasswdLine', 'hashPassword', 'HtpasswdFormatError',
  'ldapAuthenticator', 'escapeLdapFilterValue', 'oidcAuthenticator', 'chainAuthenticators', 'AuthenticatorUnavailableError',
  'aclAuthorizer', 'ownNamespaceAcl', 'registryTokenConfig', 'MemoryThrottleStore', 'RedisThrottleStore', 'redisThrottleStore',
  'failFastRedisOptions', 'failFastClusterOptions',
  // keys and scopes
  'loadSigningKey', 'loadKeyRing', 'generateSigningKey', 'createSelfSignedCertificate', 'splitCertificates', 'libtrustKeyId',
  'jwkThumbprint', 'KeyConfigurationError', 'parseScope', 'parseScopeList', 'formatScope', 'formatGrantedScope', 'mergeScopes',
  'ScopeSyntaxError', 'DockgateError',
  // bearer protection and the registry client side
  'bearerGuard', 'requireBearer', 'bearerOf', 'RegistryError', 'writeRegistryError', 'formatBearerChallenge', 'quotedString',
  'bearerTokenFrom', 'missingAccess', 'accessRecords', 'parseChallenge', 'parseChallenges', 'fetchToken', 'RegistryTokenClient',
  'TokenFetchError',
  // engine API
  'engineRouter', 'listenEngine', 'handleEngineUpgrades', 'processRuntime', 'dockerRuntime', 'scriptedRuntime', 'EngineError',
  'writeEngineError', 'writeEngineJson', 'writeEngineAuthError', 'EngineClient', 'EngineClientError', 'gateApiVersion',
  'resolveVersionRange', 'compareApiVersions', 'encodeFrame', 'FrameDecoder', 'demultiplex', 'boolValue', 'loadedImageLines',
  // image store
  'ImageStore', 'decodeRegistryAuth',
];

describe('the package entry point is ESM with types, for Node 20.19+', () => {
  test('package.json: type module, an exports map with types, the dockgate bin', () => {
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(pkg.bin).toEqual({ dockgate: 'dist/cli/main.js' });
    expect(pkg.engines.node).toBe('>=20.19');
    expect(pkg.files).toContain('dist');
  });
  test('the built entry point and its declarations exist', () => {
    expect(existsSync(join(root, 'dist/index.js'))).toBe(true);
    expect(existsSync(join(root, 'dist/index.d.ts'))).toBe(true);
  });
  test('importing "dockgate" by name (self-reference through exports) gives every documented export', () => {
    const names = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e',
      "const m = await import('dockgate'); process.stdout.write(JSON.stringify(Object.keys(m)))"], { cwd: root, encoding: 'utf8' })) as string[];
    for (const name of PUBLIC_API) expect(names).toContain(name);
  });
  test('the CLI runs from the build', () => {
    const out = execFileSync(process.execPath, [join(root, pkg.bin.dockgate as string), '--help'], { encoding: 'utf8' });
    expect(out).toContain('keygen');
  });
});
