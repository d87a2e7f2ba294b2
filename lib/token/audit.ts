import type { Request } from 'express';
import type { OAuthErrorCode } from './oauth-error.js';

/**
 * What the audit hook is told after each decision of the token endpoint: who got what, for
 * which service and client. It never carries a password or a token. The same events feed the
 * `logger` (one line each) and the `metrics`: one mechanism.
 */
export interface AuditEvent {
  /**
   * `token.issued`, `login.failed`, `login.throttled`, `refresh.refused`, `refresh_token.revoked`,
   * or `request.refused` for any other refusal (malformed request, unknown service, store outage).
   */
  type: 'token.issued' | 'login.failed' | 'login.throttled' | 'refresh.refused' | 'refresh_token.revoked' | 'request.refused';
  /** `password`, `refresh_token`, `basic` (GET with Basic credentials) or `anonymous`. */
  grant?: 'password' | 'refresh_token' | 'basic' | 'anonymous';
  /** The account: the authenticated subject, or the username that failed. */
  account: string;
  service?: string;
  clientId?: string;
  /** Client address as Express sees it (`req.ip`; set `trust proxy` behind a proxy). */
  ip?: string;
  /** Scopes asked for, space-separated. */
  requested?: string;
  /** Scopes granted, space-separated. */
  granted?: string;
  /** Whether a refresh token was issued (never the token itself). */
  refreshTokenIssued?: boolean;
  /** Why a request was refused (for a refused refresh token, which check failed; the client is told less). */
  reason?: string;
  /** The OAuth error code the client was answered with, on every refusal. */
  error?: OAuthErrorCode;
}

/** Host hook receiving {@link AuditEvent}s. It must not throw; if it does, the error is reported through `onError`. */
export type AuditHook = (event: AuditEvent) => void;

/** Where a token decision is recorded; the request (when there is one) gives the per-request logger. */
export type TokenEventSink = (event: AuditEvent, req?: Request) => void;
