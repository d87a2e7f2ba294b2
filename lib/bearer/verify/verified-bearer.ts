import type { JWTPayload } from 'jose';
import type { AccessEntry } from '../../scope/index.js';

/**
 * What a verified bearer token says, put on the request by `requireBearer` (`req.bearer`,
 * or `bearerOf(req)`).
 */
export interface VerifiedBearer {
  /** The `sub` claim: the account, `''` for an anonymous token. */
  readonly subject: string;
  /** The `access` claim: everything the token grants, not only what this route required. */
  readonly access: readonly AccessEntry[];
  /** When the token expires (its `exp`). */
  readonly expiresAt: Date;
  /** Every verified claim, for hosts that issue extra ones. */
  readonly claims: Readonly<JWTPayload>;
}
