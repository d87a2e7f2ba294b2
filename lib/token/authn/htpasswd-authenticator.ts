import bcrypt from 'bcryptjs';
import { readFileSync, statSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseHtpasswd, type HtpasswdTable } from './parse-htpasswd.js';
import type { AccountStatus, Authenticator } from './types.js';
import { functionOption, integerOption } from '../../options/option-checks.js';

/** Where the htpasswd table comes from: a file (re-read when it changes) or fixed text. */
export type HtpasswdSource = { file: string } | { content: string };

/** Options of {@link htpasswdAuthenticator}. */
export interface HtpasswdOptions {
  /**
   * Called when re-reading a changed file fails (unreadable, deleted, or a bad line). The table
   * loaded before stays in use, and each change is reported once, not once per request. The error
   * message names the line, never a hash. Defaults to `process.emitWarning`.
   */
  onError?: (error: Error) => void;
  /**
   * With `{ file }`: how long, in milliseconds, a check of the file holds before the next request
   * checks again (default {@link HTPASSWD_RECHECK_MS}). A user added or removed counts from the
   * first request after that. `0` checks on every request.
   */
  recheckMs?: number;
}

/** Default of {@link HtpasswdOptions.recheckMs}: a changed file is seen within a second. */
export const HTPASSWD_RECHECK_MS = 1000;

interface LoadedTable extends HtpasswdTable {
  /** A hash of the table's typical cost that matches no password, compared for unknown users. */
  dummyHash: string;
}

function withDummy(table: HtpasswdTable): LoadedTable {
  // Any 31 characters after a real salt form a well-formed hash; comparing against it costs the
  // same as a real user's hash but can never succeed.
  return { ...table, dummyHash: bcrypt.genSaltSync(table.typicalCost) + 'x'.repeat(31) };
}

function fileStamp(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

function checkSource(source: unknown): HtpasswdSource {
  if (typeof source !== 'object' || source === null) {
    throw new TypeError('htpasswd source must be { file } or { content }');
  }
  const { file, content } = source as { file?: unknown; content?: unknown };
  if (file !== undefined && content !== undefined) {
    throw new TypeError('htpasswd source must have "file" or "content", not both');
  }
  if (file !== undefined) {
    if (typeof file !== 'string' || file.length === 0) throw new TypeError('"file" must be a non-empty path');
    return { file };
  }
  if (typeof content !== 'string') throw new TypeError('htpasswd source must be { file } or { content }');
  return { content };
}

/**
 * An {@link Authenticator} backed by an htpasswd table of bcrypt hashes (`htpasswd -B`, or
 * {@link htpasswdLine}). The identity's `subject` is the user name.
 *
 * The table is read and validated at construction, so a bad file stops start-up. With `{ file }`
 * the file's inode, size and times are checked (one synchronous `stat`, which keeps the check off the
 * libuv threadpool where signing runs) at the first authentication after `recheckMs` (a second)
 * has passed since the last check, and the file is re-read when they changed, so users can be
 * added or removed without a restart. One stat per request cost the demo's refresh grant 10 µs of
 * its 450 (bench:token's profile); one a second costs nothing measurable. A timed stat was
 * chosen over `fs.watch` because watchers miss editors' write-and-rename, do not fire on many
 * bind-mounted or network files (a common way to hand the file to a container), and need closing.
 * Replace the file by renaming a complete new one into place: a half-written file is read as it is.
 *
 * An unknown user resolves to undefined (see {@link Authenticator}), a wrong password to null.
 * `lookup` (asked on refresh grants) re-reads a changed file the same way and answers `active`
 * for a user in the table, `unknown` for one removed from it, whose refresh tokens then stop.
 * Unknown users still pay for one bcrypt comparison (against a dummy hash of the most common cost
 * in the table), so response time does not tell which user names exist.
 *
 * @throws {HtpasswdFormatError} at construction when a line is not a bcrypt `user:hash`.
 * @throws {TypeError} when the source or an option is malformed.
 * @example
 * const authenticate = htpasswdAuthenticator({ file: '/etc/dockgate/htpasswd' }, {
 *   onError: (err) => logger.warn(err.message),
 * });
 * await authenticate({ username: 'alice', password: 's3cret', service: 'registry.local' });
 * // → { subject: 'alice' }, null (wrong password) or undefined (no such user)
 */
export function htpasswdAuthenticator(source: HtpasswdSource, options: HtpasswdOptions = {}): Authenticator {
  const checked = checkSource(source);
  if (typeof options !== 'object' || options === null) throw new TypeError('htpasswd options must be an object');
  const onError = functionOption(options.onError ?? ((error: Error) => process.emitWarning(error)), 'onError');
  const recheckMs = integerOption(options.recheckMs ?? HTPASSWD_RECHECK_MS, 'recheckMs', 0, 24 * 3600 * 1000, 'milliseconds');

  if ('content' in checked) {
    const table = withDummy(parseHtpasswd(checked.content, 'htpasswd'));
    const fixed: Authenticator = (request) => verify(table, request.username, request.password);
    fixed.lookup = async (subject) => statusOf(table, subject);
    return fixed;
  }

  const file = checked.file;
  const origin = `htpasswd file ${file}`;
  // Stamp before reading: a change in between then shows up as a new stamp and is re-read.
  let stamp = fileStamp(statSync(file));
  let table = withDummy(parseHtpasswd(readFileSync(file, 'utf8'), origin));
  let reading: Promise<LoadedTable> | undefined;

  /** The file's stamp now, or 'unreadable' (reported once per change into that state). */
  function stampNow(): string {
    try {
      return fileStamp(statSync(file));
    } catch (err) {
      if (stamp !== 'unreadable') onError(new Error(`${origin}: cannot stat, keeping the previous users`, { cause: err }));
      return 'unreadable';
    }
  }

  async function reread(): Promise<LoadedTable> {
    try {
      table = withDummy(parseHtpasswd(await readFile(file, 'utf8'), origin));
    } catch (err) {
      onError(err instanceof Error ? err : new Error(String(err)));
    }
    return table;
  }

  // The check is a synchronous stat (about 2 µs on a local disk), not fs.promises.stat: that is a
  // libuv threadpool round trip, and the pool is where ES256 signing runs too, so under load every
  // refresh grant queued its stat behind dozens of signatures (1.5-3.7 ms of waiting per grant at
  // 32 connections, measured) while the event loop sat idle. Only a changed file is read
  // asynchronously; requests arriving meanwhile wait for that one read.
  let checkedAt = performance.now();
  function current(): LoadedTable | Promise<LoadedTable> {
    if (reading) return reading;
    const time = performance.now();
    if (time - checkedAt < recheckMs) return table;
    checkedAt = time;
    const now = stampNow();
    if (now === stamp || now === 'unreadable') {
      stamp = now;
      return table;
    }
    stamp = now;
    reading = reread().finally(() => {
      reading = undefined;
    });
    return reading;
  }

  const fromFile: Authenticator = async (request) => verify(await current(), request.username, request.password);
  fromFile.lookup = async (subject) => statusOf(await current(), subject);
  return fromFile;
}

function statusOf(table: LoadedTable, subject: string): AccountStatus {
  return table.users.has(subject) ? 'active' : 'unknown';
}

async function verify(table: LoadedTable, username: unknown, password: unknown): Promise<{ subject: string } | null | undefined> {
  const hash = typeof username === 'string' ? table.users.get(username) : undefined;
  const candidate = typeof password === 'string' ? password : '';
  const matches = await bcrypt.compare(candidate, hash ?? table.dummyHash);
  // undefined: not a user of this table, so chainAuthenticators may ask the next authenticator.
  if (hash === undefined) return undefined;
  return matches && typeof password === 'string' ? { subject: username as string } : null;
}
