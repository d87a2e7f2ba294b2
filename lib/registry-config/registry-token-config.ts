import { httpUrl, nonEmptyString } from '../options/option-checks.js';

/** What a distribution registry needs to trust a dockgate token service. */
export interface RegistryTokenConfigInput {
  /** URL of the token endpoint, e.g. `http://127.0.0.1:5001/token`. */
  realm: string;
  /** Service name; must be one of the token service's `service` values (the JWT `aud`). */
  service: string;
  /** Issuer; must equal the token service's `issuer` (the JWT `iss`). */
  issuer: string;
  /** Path of the PEM certificate bundle holding the signing key's certificate. */
  rootCertBundle: string;
}

function yamlString(value: string): string {
  // JSON strings are valid YAML double-quoted scalars.
  return JSON.stringify(value);
}

/**
 * The `auth.token` block of a registry's config.yml that makes it trust this token service
 * (distribution docs: configuration, `auth.token`).
 *
 * @example
 * console.log(registryTokenConfig({ realm: 'http://127.0.0.1:5001/token', service: 'registry.local',
 *   issuer: 'dockgate', rootCertBundle: '/etc/dockgate/cert.pem' }));
 */
export function registryTokenConfig(input: RegistryTokenConfigInput): string {
  for (const name of ['realm', 'service', 'issuer', 'rootCertBundle'] as const) nonEmptyString(input[name], name);
  httpUrl(input.realm, 'realm');
  return [
    'auth:',
    '  token:',
    `    realm: ${yamlString(input.realm)}`,
    `    service: ${yamlString(input.service)}`,
    `    issuer: ${yamlString(input.issuer)}`,
    `    rootcertbundle: ${yamlString(input.rootCertBundle)}`,
    '',
  ].join('\n');
}
