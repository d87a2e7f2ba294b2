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

/** The documented values of each entry (README "API"), by the name a host imports. */
const PUBLIC_API: Record<string, readonly string[]> = {
  'dockgate': [
    'tokenRouter', 'OAuthError', 'signAccessToken', 'MemoryRefreshTokenStore', 'MemoryThrottleStore',
    'htpasswdAuthenticator', 'htpasswdLine', 'hashPassword', 'HtpasswdFormatError', 'chainAuthenticators', 'AuthenticatorUnavailableError',
    'aclAuthorizer', 'ownNamespaceAcl', 'registryTokenConfig',
    'loadSigningKey', 'loadKeyRing', 'generateSigningKey', 'createSelfSignedCertificate', 'splitCertificates', 'libtrustKeyId',
    'jwkThumbprint', 'KeyConfigurationError', 'parseScope', 'parseScopeList', 'formatScope', 'formatGrantedScope', 'mergeScopes',
    'ScopeSyntaxError', 'DockgateError', 'MissingPeerError',
    'bearerGuard', 'requireBearer', 'bearerOf', 'RegistryError', 'writeRegistryError', 'formatBearerChallenge', 'BearerSetupError',
    'AuthenticatorResultError',
  ],
  'dockgate/redis': ['RedisRefreshTokenStore', 'redisRefreshTokenStore', 'RedisThrottleStore', 'redisThrottleStore', 'failFastRedisOptions', 'failFastClusterOptions'],
  'dockgate/ldap': ['ldapAuthenticator', 'escapeLdapFilterValue'],
  'dockgate/oidc': ['oidcAuthenticator'],
  'dockgate/engine': [
    'engineRouter', 'listenEngine', 'appPrototypes', 'handleEngineUpgrades', 'EngineError', 'ENGINE_ERROR_STATUS', 'writeEngineError', 'writeEngineAuthError',
    'gateApiVersion', 'resolveVersionRange', 'DEFAULT_VERSION_RANGE', 'ENGINE_RELEASES', 'compareApiVersions', 'apiVersionLessThan',
    'apiVersionAtLeast', 'isApiVersion', 'minApiVersion', 'encodeFrame', 'FrameDecoder', 'demultiplex', 'familiarImageRef',
    'decodeRegistryAuth', 'loadedImageLines', 'StdcopyFramingError', 'EngineListenError', 'SlowEventsSubscriberError',
    // The policy checkpoint's vocabulary and built-in policies (README "Running the engine for several users").
    'ENGINE_ACTIONS', 'ENGINE_ACTION_NAMES', 'isCollectionAction', 'allow', 'allowWithout', 'refuse', 'hide', 'callerFromBearer', 'ANONYMOUS_CALLER',
    'composePolicies', 'ownershipPolicy', 'tenantPolicy', 'imageNamePolicy', 'ownerCapsPolicy', 'tenancyPolicy', 'adminPredicate',
    'defaultAdmin', 'DEFAULT_ADMIN_ACCESS', 'OWNER_LABEL', 'DEFAULT_CAPABILITIES', 'DEFAULT_MAX_CONTAINERS_PER_OWNER',
    'DEFAULT_MAX_IMAGE_BYTES_PER_OWNER', 'DEFAULT_MAX_TENANT_MEMORY', 'tenantLimitsPolicy', 'TENANT_DROPPED_CAPABILITIES',
    // The typed container spec a runtime's create is handed, and the create fields a runtime states (README, engineRouter).
    'containerSpecOf', 'execSpecOf', 'CREATE_FIELDS', 'createFieldsExcept', 'UNHONORED_HOST_FIELDS',
  ],
  'dockgate/engine/sandbox': ['sandboxRuntime'],
  'dockgate/engine/process': ['processRuntime'],
  'dockgate/engine/scripted': ['scriptedRuntime'],
  'dockgate/engine/docker': ['dockerRuntime'],
  'dockgate/engine/images': ['ImageStore'],
  'dockgate/client/registry': ['parseChallenge', 'parseChallenges', 'fetchToken', 'RegistryTokenClient', 'TokenFetchError'],
  'dockgate/client/engine': ['EngineClient', 'ENGINE_CLIENT_API_VERSION', 'EngineClientError'],
};

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
  test('the exports map has one entry per documented import path, each with its types, and the package has no side effects', () => {
    expect(Object.keys(pkg.exports).filter((k) => k !== './package.json').map((k) => (k === '.' ? 'dockgate' : `dockgate/${k.slice(2)}`)).sort())
      .toEqual(Object.keys(PUBLIC_API).sort());
    for (const [key, entry] of Object.entries(pkg.exports)) {
      if (key === './package.json') continue;
      expect(entry.types).toBe(entry.default.replace(/\.js$/, '.d.ts'));
      expect(existsSync(join(root, entry.default))).toBe(true);
    }
    expect((pkg as unknown as { sideEffects: unknown }).sideEffects).toBe(false);
  });
  test.each(Object.entries(PUBLIC_API))('importing %s by name (self-reference through exports) gives exactly its documented values', (entry, expected) => {
    const names = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e',
      `const m = await import(${JSON.stringify(entry)}); process.stdout.write(JSON.stringify(Object.keys(m)))`], { cwd: root, encoding: 'utf8' })) as string[];
    expect([...names].sort()).toEqual([...expected].sort());
  });
  test('every exported value is documented in the README (named in backquotes)', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const undocumented = Object.values(PUBLIC_API).flat().filter((name) => !new RegExp(`\x60[^\x60\\n]*\\b${name}\\b[^\x60\\n]*\x60`).test(readme));
    expect(undocumented).toEqual([]);
  });
  test('the CLI runs from the build', () => {
    const out = execFileSync(process.execPath, [join(root, pkg.bin.dockgate as string), '--help'], { encoding: 'utf8' });
    expect(out).toContain('keygen');
  });
});
