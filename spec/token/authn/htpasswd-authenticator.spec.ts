import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import bcrypt from 'bcryptjs';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync, renameSync, unlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HtpasswdFormatError,
  htpasswdAuthenticator,
  htpasswdLine,
  type Authenticator,
} from '../../../lib/token/authn/index.js';
import { HTPASSWD_RECHECK_MS } from '../../../lib/token/authn/htpasswd-authenticator.js';

// Cost 4 keeps bcrypt fast; the behaviour does not depend on the cost.
const COST = 4;
const SERVICE = 'registry.local';
let alice: string;
let bob: string;
let dir: string;

function ask(authenticate: Authenticator, username: string, password: string) {
  return authenticate({ username, password, service: SERVICE });
}

beforeAll(async () => {
  alice = await htpasswdLine('alice', 'alice-pw', COST);
  bob = await htpasswdLine('bob', 'bob-pw', COST);
  dir = mkdtempSync(join(tmpdir(), 'dockgate-htpasswd-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a user is authenticated only with the password matching its bcrypt hash', () => {
  test('the right password resolves to an identity whose subject is the user name', async () => {
    const authenticate = htpasswdAuthenticator({ content: `${alice}\n${bob}\n` });
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
  });
  test('a wrong password resolves to null', async () => {
    const authenticate = htpasswdAuthenticator({ content: alice });
    await expect(ask(authenticate, 'alice', 'bob-pw')).resolves.toBeNull();
    await expect(ask(authenticate, 'alice', '')).resolves.toBeNull();
  });
  test('another user\'s password does not open an account', async () => {
    const authenticate = htpasswdAuthenticator({ content: `${alice}\n${bob}` });
    await expect(ask(authenticate, 'bob', 'alice-pw')).resolves.toBeNull();
  });
  test('user names are compared exactly (case and white space count): another spelling is an unknown user', async () => {
    const authenticate = htpasswdAuthenticator({ content: alice });
    await expect(ask(authenticate, 'Alice', 'alice-pw')).resolves.toBeUndefined();
    await expect(ask(authenticate, 'alice ', 'alice-pw')).resolves.toBeUndefined();
  });
  test('the $2a$, $2b$ and $2y$ bcrypt prefixes are all accepted', async () => {
    const hash = bcrypt.hashSync('pw', COST).slice(4);
    const authenticate = htpasswdAuthenticator({
      content: `a:$2a$${hash}\nb:$2b$${hash}\ny:$2y$${hash}`,
    });
    for (const user of ['a', 'b', 'y']) await expect(ask(authenticate, user, 'pw')).resolves.toEqual({ subject: user });
  });
});

describe('an unknown user is refused after the same bcrypt work as a known one', () => {
  test('an unknown user resolves to undefined (not this table\'s user), which the router refuses like a wrong password', async () => {
    const authenticate = htpasswdAuthenticator({ content: alice });
    await expect(ask(authenticate, 'mallory', 'alice-pw')).resolves.toBeUndefined();
    await expect(ask(authenticate, '', '')).resolves.toBeUndefined();
  });
  test('an unknown user still runs one bcrypt comparison at the table\'s cost', async () => {
    const authenticate = htpasswdAuthenticator({ content: alice });
    const compare = bcrypt.compare;
    const seen: string[] = [];
    (bcrypt as { compare: unknown }).compare = (password: string, hash: string) => {
      seen.push(hash);
      return compare(password, hash);
    };
    try {
      await ask(authenticate, 'mallory', 'x');
      await ask(authenticate, '__proto__', 'x');
    } finally {
      (bcrypt as { compare: unknown }).compare = compare;
    }
    expect(seen).toHaveLength(2);
    for (const hash of seen) expect(hash).toMatch(/^\$2[aby]\$04\$[./A-Za-z0-9]{53}$/);
  });
});

describe('the htpasswd text may hold comments, blank lines and CRLF line ends', () => {
  test('blank lines and # comments are skipped', async () => {
    const authenticate = htpasswdAuthenticator({ content: `# registry users\n\n   \n${alice}\n  # bob left\n${bob}\n\n` });
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
    await expect(ask(authenticate, '# registry users', '')).resolves.toBeUndefined();
  });
  test('CRLF line ends and trailing white space after the hash are ignored', async () => {
    const authenticate = htpasswdAuthenticator({ content: `${alice}\r\n${bob}  \r\n` });
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
  });
});

describe('a table with a non-bcrypt or malformed line is rejected at construction without showing the hash', () => {
  test.each([
    ['Apache MD5', 'carol:$apr1$Qx1b2c3d$abcdefghijklmnopqrstuv', /Apache MD5/],
    ['SHA-1', 'carol:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=', /SHA-1/],
    ['SHA-512 crypt', 'carol:$6$saltsalt$abcdefghijklmnopqrstuvwxyz0123456789', /SHA-512/],
    ['plain text', 'carol:hunter2', /crypt\(3\) or plain text/],
    ['truncated bcrypt', 'carol:$2y$10$abcdefghijklmnopqrstuv', /malformed bcrypt/],
    ['bcrypt cost out of range', `carol:$2y$03$${'a'.repeat(53)}`, /malformed bcrypt/],
  ])('%s on line 3 is named by line number, user and scheme', (_name, line, scheme) => {
    const content = `${alice}\n\n${line}\n${bob}`;
    let error: unknown;
    try {
      htpasswdAuthenticator({ content });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HtpasswdFormatError);
    const { message, code, line: lineNo } = error as HtpasswdFormatError;
    expect(code).toBe('ERR_HTPASSWD_FORMAT');
    expect(lineNo).toBe(3);
    expect(message).toMatch(/^htpasswd line 3: user "carol" has /);
    expect(message).toMatch(scheme);
    expect(message).not.toContain(line.slice('carol:'.length));
    expect(message).not.toContain(alice.slice('alice:'.length));
  });
  test('a line without "user:" is rejected without echoing the line (it may be a pasted password)', () => {
    expect(() => htpasswdAuthenticator({ content: `${alice}\ncorrect horse battery staple` })).toThrow(
      new HtpasswdFormatError('htpasswd line 2: expected "user:hash"', 2),
    );
    expect(() => htpasswdAuthenticator({ content: `:${bob.slice(4)}` })).toThrow(/line 1: expected "user:hash"/);
  });
  test('a user defined twice is rejected, naming both lines', () => {
    expect(() => htpasswdAuthenticator({ content: `${alice}\n${bob}\n${alice}` })).toThrow(
      /line 3: user "alice" is already defined on line 1/,
    );
  });
  test('a file source names the file in the message', () => {
    const file = join(dir, 'bad-at-start');
    writeFileSync(file, 'dave:{SHA}abc=\n');
    expect(() => htpasswdAuthenticator({ file })).toThrow(`htpasswd file ${file} line 1: user "dave" has SHA-1`);
  });
  test('a missing file fails at construction', () => {
    expect(() => htpasswdAuthenticator({ file: join(dir, 'does-not-exist') })).toThrow(/ENOENT/);
  });
  test.each([
    [null, /\{ file \} or \{ content \}/],
    [{}, /\{ file \} or \{ content \}/],
    [{ file: '' }, /"file" must be a non-empty path/],
    [{ file: 'a', content: 'b' }, /not both/],
    [{ content: 42 }, /\{ file \} or \{ content \}/],
  ])('a malformed source %j is a TypeError', (source, message) => {
    expect(() => htpasswdAuthenticator(source as never)).toThrow(TypeError);
    expect(() => htpasswdAuthenticator(source as never)).toThrow(message);
  });
  test.each([-1, 1.5, '1000', Number.NaN])('recheckMs %p is a TypeError naming the option', (recheckMs) => {
    expect(() => htpasswdAuthenticator({ content: '' }, { recheckMs: recheckMs as never })).toThrow(/"recheckMs" must be a non-negative integer|"recheckMs" must be an integer from 0/);
  });
  test('a non-function onError is a TypeError naming the option', () => {
    expect(() => htpasswdAuthenticator({ content: '' }, { onError: 'log' as never })).toThrow(/"onError" must be a function/);
  });
});

describe('a file source is re-read when the file changes', () => {
  test('a user added to the file can log in on the next request, without a restart', async () => {
    const file = join(dir, 'grow');
    writeFileSync(file, `${alice}\n`);
    const authenticate = htpasswdAuthenticator({ file }, { recheckMs: 0 });
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toBeUndefined();
    writeFileSync(file, `${alice}\n${bob}\n`);
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
  });
  test('a user removed from the file (file replaced by rename) can no longer log in', async () => {
    const file = join(dir, 'shrink');
    writeFileSync(file, `${alice}\n${bob}\n`);
    const authenticate = htpasswdAuthenticator({ file }, { recheckMs: 0 });
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
    writeFileSync(`${file}.new`, `${alice}\n`);
    renameSync(`${file}.new`, file);
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toBeUndefined();
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
  });
  test('a bad reload keeps the previous users and reports the error once through onError', async () => {
    const file = join(dir, 'bad-reload');
    writeFileSync(file, `${alice}\n`);
    const errors: Error[] = [];
    const authenticate = htpasswdAuthenticator({ file }, { onError: (err) => errors.push(err), recheckMs: 0 });
    writeFileSync(file, `${alice}\neve:{SHA}secret-hash-value=\n`);
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(HtpasswdFormatError);
    expect(errors[0]?.message).toContain('line 2: user "eve" has SHA-1');
    expect(errors[0]?.message).not.toContain('secret-hash-value');
    writeFileSync(file, `${alice}\n${bob}\n`);
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
    expect(errors).toHaveLength(1);
  });
  test('a deleted file keeps the previous users and is reported once', async () => {
    const file = join(dir, 'deleted');
    writeFileSync(file, `${alice}\n`);
    const errors: Error[] = [];
    const authenticate = htpasswdAuthenticator({ file }, { onError: (err) => errors.push(err), recheckMs: 0 });
    unlinkSync(file);
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    await expect(ask(authenticate, 'alice', 'alice-pw')).resolves.toEqual({ subject: 'alice' });
    expect(errors.map((e) => e.message)).toEqual([`htpasswd file ${file}: cannot stat, keeping the previous users`]);
  });
  test('concurrent requests during a change all see the new table', async () => {
    const file = join(dir, 'concurrent');
    writeFileSync(file, `${alice}\n`);
    const authenticate = htpasswdAuthenticator({ file }, { recheckMs: 0 });
    writeFileSync(file, `${bob}\n`);
    const results = await Promise.all([1, 2, 3].map(() => ask(authenticate, 'bob', 'bob-pw')));
    expect(results).toEqual([{ subject: 'bob' }, { subject: 'bob' }, { subject: 'bob' }]);
  });
});

describe('by default a file is checked at most once a second: a change counts from the first request a second after the last check', () => {
  test('a user added is refused until a second has passed, then logs in', async () => {
    const file = join(dir, 'timed');
    writeFileSync(file, `${alice}\n`);
    const authenticate = htpasswdAuthenticator({ file });
    writeFileSync(file, `${alice}\n${bob}\n`);
    const written = Date.now();
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toBeUndefined();
    expect(Date.now() - written).toBeLessThan(HTPASSWD_RECHECK_MS);
    await new Promise((resolve) => setTimeout(resolve, HTPASSWD_RECHECK_MS + 50));
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
    await expect(authenticate.lookup!('bob')).resolves.toBe('active');
  });
});

describe('a file source checks for changes without waiting on the libuv threadpool (where signing runs)', () => {
  test('lookup and authentication answer while every threadpool thread is busy, and a change is still seen afterwards', async () => {
    const file = join(dir, 'busy-pool');
    writeFileSync(file, `${alice}\n`);
    const authenticate = htpasswdAuthenticator({ file }, { recheckMs: 0 });
    // Each open of a FIFO for reading holds a threadpool thread until a writer opens it.
    const fifo = join(dir, 'busy-pool.fifo');
    execFileSync('mkfifo', [fifo]);
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const held = Array.from({ length: threads }, () => open(fifo, 'r'));
    // A job queued now (an fs.promises.stat) could only run after the FIFO is opened for writing.
    const canary = open(file, 'r').then((h) => h.close()).then(() => 'pool free');
    const timeout = (ms: number) => new Promise<string>((resolve) => setTimeout(() => resolve('timed out'), ms).unref());
    let writer: number | undefined;
    try {
      await expect(Promise.race([canary, timeout(200)])).resolves.toBe('timed out');
      await expect(Promise.race([authenticate.lookup!('alice'), timeout(2000)])).resolves.toBe('active');
      await expect(Promise.race([authenticate.lookup!('bob'), timeout(2000)])).resolves.toBe('unknown');
    } finally {
      writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      for (const handle of await Promise.all(held)) await handle.close();
      closeSync(writer);
      await canary;
    }
    writeFileSync(`${file}.new`, `${bob}\n`);
    renameSync(`${file}.new`, file);
    await expect(authenticate.lookup!('alice')).resolves.toBe('unknown');
    await expect(ask(authenticate, 'bob', 'bob-pw')).resolves.toEqual({ subject: 'bob' });
  });
});
