/** Username and password from an `Authorization: Basic` header. */
export interface BasicCredentials {
  username: string;
  password: string;
}

/**
 * Parses `Authorization: Basic base64(user:pass)` (RFC 7617). Returns undefined when no
 * Authorization header was sent and null when one was sent but is not usable Basic credentials.
 */
export function parseBasicCredentials(header: string | undefined): BasicCredentials | null | undefined {
  if (header === undefined) return undefined;
  const match = /^basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if (/[\x00-\x1F\x7F]/.test(username)) return null;
  return { username, password };
}
