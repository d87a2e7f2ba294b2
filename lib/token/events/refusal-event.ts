import type { Request } from 'express';
import type { AuditEvent, TokenEventSink } from '../audit.js';
import type { OAuthError } from '../oauth-error.js';
import { refusalRecorded } from './token-events.js';

const GRANTS = new Set(['password', 'refresh_token']);

/** A request field as an event field: only a string, cut short (it is request data, not ours). */
function field(params: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = params?.[name];
  return typeof value === 'string' ? value.slice(0, 256) : undefined;
}

/**
 * Records a refusal the grants did not record themselves (malformed request, unknown service,
 * store outage, server error) as a `request.refused` event. Only names that are no secret are
 * taken from the request: grant_type, username, service, client_id; never password or token.
 */
export function refusalRecorder(sink: TokenEventSink | undefined): (err: OAuthError, req: Request) => void {
  if (!sink) return () => {};
  return (err, req) => {
    if (refusalRecorded(req)) return;
    const params = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
    const grant = field(params, 'grant_type');
    const event: AuditEvent = {
      type: 'request.refused',
      ...(grant && GRANTS.has(grant) ? { grant: grant as AuditEvent['grant'] } : {}),
      account: field(params, 'username') ?? field(params, 'account') ?? '',
      ...(field(params, 'service') !== undefined ? { service: field(params, 'service') } : {}),
      ...(field(params, 'client_id') !== undefined ? { clientId: field(params, 'client_id') } : {}),
      ...(req.ip ? { ip: req.ip } : {}),
      reason: err.description,
      error: err.error,
    };
    sink(event, req);
  };
}
