import type { DockgateMetrics } from '../metrics/index.js';
import { OAuthError } from './oauth-error.js';

/** Seconds a client is told to wait when the refresh-token store is unreachable. */
export const STORE_RETRY_AFTER = 5;

/**
 * Runs a refresh-token store operation; a rejection (store unreachable) becomes 503
 * `temporarily_unavailable` with Retry-After, keeping the cause for the server log.
 */
export async function callStore<T>(operation: () => Promise<T>, metrics?: DockgateMetrics): Promise<T> {
  try {
    return await operation();
  } catch (cause) {
    metrics?.backendFailures.inc({ backend: 'refresh_store' });
    throw new OAuthError('temporarily_unavailable', 'the token service cannot reach its refresh-token store; retry later', {
      headers: { 'Retry-After': String(STORE_RETRY_AFTER) },
      cause,
    });
  }
}
