import bcrypt from 'bcryptjs';

/** Lowest and highest bcrypt cost factors bcrypt accepts. */
const MIN_COST = 4;
const MAX_COST = 31;

function checkCost(cost: number): void {
  if (!Number.isInteger(cost) || cost < MIN_COST || cost > MAX_COST) {
    throw new TypeError(`"cost" must be an integer from ${MIN_COST} to ${MAX_COST}`);
  }
}

/**
 * Hashes a password with bcrypt (`$2b$`), the only scheme {@link htpasswdAuthenticator} accepts.
 * bcrypt reads only the first 72 bytes of a password.
 *
 * @param cost bcrypt cost factor (log2 of rounds). Defaults to 10.
 * @example
 * const hash = await hashPassword('s3cret'); // '$2b$10$…'
 */
export async function hashPassword(password: string, cost = 10): Promise<string> {
  if (typeof password !== 'string') throw new TypeError('"password" must be a string');
  checkCost(cost);
  return bcrypt.hash(password, cost);
}

/**
 * Builds one htpasswd line `user:$2b$…` for a user and a password.
 *
 * @param cost bcrypt cost factor. Defaults to 10.
 * @throws {TypeError} when the user is empty or holds `:`, CR or LF (they would break the file),
 *   or starts with `#` (it would read as a comment).
 * @example
 * await appendFile('htpasswd', (await htpasswdLine('alice', 's3cret')) + '\n');
 */
export async function htpasswdLine(user: string, password: string, cost = 10): Promise<string> {
  if (typeof user !== 'string' || user.length === 0) throw new TypeError('"user" must be a non-empty string');
  if (/[:\r\n]/.test(user)) throw new TypeError('"user" must not contain ":", CR or LF');
  if (user.trim() !== user || user.startsWith('#')) {
    throw new TypeError('"user" must not start with "#" or start or end with white space');
  }
  return `${user}:${await hashPassword(password, cost)}`;
}
