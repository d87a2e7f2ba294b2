import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** Options of {@link startOidcIssuer}. */
export interface OidcIssuerOptions {
  /** Client ids: each is the `aud` of the ID tokens issued for it. */
  clients: string[];
}

/** What one ID token says besides iss/aud/iat/exp. */
export type IdTokenClaims = Record<string, string | string[] | number>;

/** A real OpenID Connect provider (oidc-provider 9) serving discovery and JWKS over HTTP. */
export interface RunningOidcIssuer {
  /** `http://127.0.0.1:PORT`, the `iss` of its tokens. */
  readonly issuer: string;
  /** Issues an ID token for `audience` (a client id) with these claims, valid `ttlSeconds` (negative: already expired). */
  idToken(audience: string, claims: IdTokenClaims, ttlSeconds?: number): Promise<string>;
  /** Replaces the signing key (new `kid`), keeping the old one published only when `keepOld`. */
  rotateKey(keepOld?: boolean): Promise<void>;
  /** While down, every connection is dropped (the issuer is unreachable). */
  setDown(down: boolean): void;
  stop(): Promise<void>;
}

let keyCounter = 0;
async function signingKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  keyCounter += 1;
  return { ...(await exportJWK(privateKey)), kid: `spec-key-${keyCounter}-${Date.now()}`, alg: 'RS256', use: 'sig' };
}

/**
 * Runs oidc-provider in-process on a free 127.0.0.1 port. ID tokens come from the provider's own
 * IdToken model — what its token endpoint signs at the end of an authorization-code flow —
 * issued programmatically for a registered client, so no browser login has to be driven: they
 * are signed with the provider's key, which relying parties find through its real
 * `/.well-known/openid-configuration` and `jwks_uri`. Key rotation builds a new Provider on the
 * same issuer URL with a new key first in its JWKS.
 *
 * @example
 * const idp = await startOidcIssuer({ clients: ['registry.test'] });
 * const token = await idp.idToken('registry.test', { sub: 'repo:acme/app:ref:refs/heads/main', repository: 'acme/app' });
 */
export async function startOidcIssuer(options: OidcIssuerOptions): Promise<RunningOidcIssuer> {
  let provider: Provider | undefined;
  let down = false;
  const server: Server = createServer((req, res) => {
    if (down || !provider) {
      req.socket.destroy();
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let keys: JWK[] = [await signingKey()];
  const build = () => new Provider(issuer, {
    clients: options.clients.map((id) => ({ client_id: id, client_secret: `${id}-secret-of-32-characters-at-least`, redirect_uris: ['https://ci.example/cb'] })),
    jwks: { keys },
    ttl: { IdToken: 600 },
  });
  provider = build();
  return {
    issuer,
    async idToken(audience, claims, ttlSeconds = 600) {
      const client = await provider!.Client.find(audience);
      if (!client) throw new Error(`no client ${audience}`);
      const token = new provider!.IdToken({}, { client });
      // Set, not masked by scopes: the claims are what a CI provider would put in its tokens.
      for (const [name, value] of Object.entries(claims)) token.set(name, value);
      return token.issue({ use: 'idtoken', expiresAt: Math.floor(Date.now() / 1000) + ttlSeconds });
    },
    async rotateKey(keepOld = false) {
      const fresh = await signingKey();
      keys = keepOld ? [fresh, ...keys] : [fresh];
      provider = build();
    },
    setDown(value) {
      down = value;
    },
    stop: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
