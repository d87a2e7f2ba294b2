/**
 * What the token service keeps about one refresh token. The token itself is never stored: only
 * its SHA-256 (`id`), so a leaked store cannot be replayed.
 */
export interface RefreshTokenRecord {
  /** Hex SHA-256 of the token. */
  id: string;
  /** The account it was issued to (JWT `sub` of the access tokens it yields). */
  subject: string;
  /** The one service it is good for. */
  service: string;
  /** The `client_id` that obtained it, for audit and optional binding. */
  clientId: string;
  /** Labels the authenticator attached to the identity, re-used by the authorizer on refresh. */
  labels?: Record<string, string[]>;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds after which the token is dead whatever its use (absolute expiry). */
  expiresAt: number;
  /** Epoch milliseconds after which the token is dead unless used again (idle expiry). */
  idleExpiresAt: number;
}

/**
 * Where refresh tokens live. Every method is atomic on its own, so the same store can be shared
 * by several token-service instances (the Redis store does this with Lua scripts).
 *
 * Implementations reject (throw) only when the store itself is unreachable; the token endpoint
 * then answers 503 `temporarily_unavailable` rather than issue a token it could not record.
 */
export interface RefreshTokenStore {
  /**
   * Records a newly issued token. With `maxPerSubject`, the subject keeps at most that many
   * tokens: the oldest beyond it are revoked, in O(1) or O(log n) per save (the token router
   * passes `refreshTokens.maxPerSubject`).
   */
  save(record: RefreshTokenRecord, maxPerSubject?: number): Promise<void>;
  /**
   * Looks a token up for use: resolves to its record with `idleExpiresAt` moved to
   * `min(now + idleTtlMs, expiresAt)`, or to null when it is unknown, revoked or expired.
   */
  use(id: string, now: number, idleTtlMs: number): Promise<RefreshTokenRecord | null>;
  /** Revokes one token; resolves to whether it existed. */
  revoke(id: string): Promise<boolean>;
  /** Revokes every token of a subject (password change, account removal); resolves to how many. */
  revokeSubject(subject: string): Promise<number>;
}
