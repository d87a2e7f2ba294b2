/**
 * client_ids whose POST repeats `scope` rather than space-joining it: containers/image
 * (skopeo, podman) in getBearerTokenOAuth2, used when it holds a Docker identity token.
 */
const REPEATED_SCOPE_CLIENTS = new Set(['containers/image']);

/**
 * RFC 6749 §3.2: request parameters "MUST NOT be included more than once", for one field as its
 * validator sees it: a repeated field is an array (or an object); what is wrong, or undefined.
 * `params` is the whole form or query, for the client_id that allows a repeated POST `scope`;
 * `multi` lists the fields that may repeat (GET `scope`).
 */
export function duplicateField(name: string, value: unknown, params: Record<string, unknown>, location: 'body' | 'query', multi: readonly string[] = []): string | undefined {
  if (value === undefined || typeof value === 'string') return undefined;
  const clientId = params['client_id'];
  const mayRepeat = multi.includes(name)
    || (name === 'scope' && location === 'body' && typeof clientId === 'string' && REPEATED_SCOPE_CLIENTS.has(clientId));
  if (mayRepeat && Array.isArray(value) && value.every((v) => typeof v === 'string')) return undefined;
  return `"${name}" must not be provided more than once`;
}
