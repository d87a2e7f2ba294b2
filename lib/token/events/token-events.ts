import type { Request } from 'express';
import type { DockgateMetrics } from '../../metrics/index.js';
import { errorFields, requestLog, type DockgateLogger } from '../../logging/index.js';
import type { AuditEvent, AuditHook, TokenEventSink } from '../audit.js';

/** Set on a request once a refusal of it was recorded, so the error handler does not record it twice. */
const RECORDED = Symbol('dockgate.tokenRefusalRecorded');

/** Whether a refusal of this request was already recorded (by the login or refresh grant). */
export function refusalRecorded(req: Request): boolean {
  return (req as unknown as Record<symbol, unknown>)[RECORDED] === true;
}

/** Log fields of an event: names an operator greps for; never a password or a token (events hold none). */
function fields(e: AuditEvent): Record<string, unknown> {
  return {
    event: e.type,
    result: e.type === 'token.issued' || e.type === 'refresh_token.revoked' ? 'ok' : e.error ?? 'refused',
    ...(e.grant ? { grant_type: e.grant } : {}),
    subject: e.account,
    ...(e.clientId !== undefined ? { client_id: e.clientId } : {}),
    ...(e.service !== undefined ? { service: e.service } : {}),
    ...(e.granted !== undefined ? { scope: e.granted } : {}),
    ...(e.requested !== undefined ? { requested: e.requested } : {}),
    ...(e.refreshTokenIssued ? { refresh_token_issued: true } : {}),
    ...(e.ip !== undefined ? { ip: e.ip } : {}),
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
  };
}

function count(metrics: DockgateMetrics, e: AuditEvent): void {
  if (e.error) metrics.tokenRefusals.inc({ error: e.error });
  switch (e.type) {
    case 'token.issued':
      // Only configured services reach this point, so `service` is a bounded label.
      metrics.tokensIssued.inc({ grant_type: e.grant ?? 'unknown', service: e.service ?? '' });
      if (e.refreshTokenIssued) metrics.refreshTokens.inc({ event: 'created' });
      if (e.grant === 'refresh_token') metrics.refreshTokens.inc({ event: 'used' });
      break;
    case 'refresh_token.revoked':
      metrics.refreshTokens.inc({ event: 'revoked' });
      break;
    case 'login.throttled':
      metrics.loginsThrottled.inc();
      break;
    default:
  }
}

/**
 * The one place a token decision goes: the metrics, one log line (through the request's own
 * logger when the host gave it one, so its request id is on the line) and the host's audit
 * hook. Undefined when none of the three is configured, so the handlers skip building events.
 */
export function tokenEventSink(parts: {
  audit?: AuditHook;
  logger?: DockgateLogger;
  metrics?: DockgateMetrics;
  onError: (err: unknown) => void;
}): TokenEventSink | undefined {
  const { audit, logger, metrics, onError } = parts;
  if (!audit && !logger && !metrics) return undefined;
  return (event, req) => {
    if (req && event.error) (req as unknown as Record<symbol, unknown>)[RECORDED] = true;
    if (metrics) count(metrics, event);
    if (logger) {
      const log = requestLog(req, logger);
      if (event.error) log.warn(fields(event), event.type);
      else log.info(fields(event), event.type);
    }
    if (audit) {
      // An audit hook that throws must not turn an issued token into a 500 (the refresh token
      // would already be recorded): its error is reported and the request goes on.
      try {
        audit(event);
      } catch (err) {
        onError(err);
      }
    }
  };
}

/** `onError`'s default when a logger is given: the error's name, code and message at error level. */
export function loggingOnError(logger: DockgateLogger): (err: unknown, req?: Request) => void {
  return (err, req) => requestLog(req, logger).error(errorFields(err), 'token service error');
}
