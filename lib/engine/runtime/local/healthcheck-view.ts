/**
 * `Config.Healthcheck` in container inspect as dockerd 20.10 shows it: the body's value decoded
 * into its HealthConfig and encoded again, so only `Test` and the nonzero `Interval`, `Timeout`,
 * `StartPeriod` and `Retries` are there (all omitempty); a null or 0 one (compose sends
 * `StartPeriod: null`) and fields HealthConfig does not have are left out.
 */
export function healthcheckView(sent: unknown): Record<string, unknown> {
  if (sent === null || typeof sent !== 'object' || Array.isArray(sent)) return {};
  const h = sent as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if (Array.isArray(h.Test) && h.Test.length > 0) out.Test = h.Test;
  for (const key of ['Interval', 'Timeout', 'StartPeriod', 'Retries']) {
    if (typeof h[key] === 'number' && h[key] !== 0) out[key] = h[key];
  }
  return out;
}
