import type { KeyRing } from '../keys/index.js';

/** What a running token service offers the host besides its routes. */
export interface TokenService {
  /** The `iss` of every token. */
  readonly issuer: string;
  /** The services (audiences) tokens are issued for. */
  readonly services: readonly string[];
  /** The imported keys: `requireBearer` in the same process verifies with them, no configuration repeated. */
  readonly keyRing: KeyRing;
  /** Revokes one refresh token; resolves to whether it existed. */
  revokeRefreshToken(token: string): Promise<boolean>;
  /** Revokes every refresh token of an account (password change, removal); resolves to how many. */
  revokeSubject(subject: string): Promise<number>;
}
