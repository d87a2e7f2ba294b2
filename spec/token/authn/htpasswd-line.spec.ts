import { describe, expect, test } from '@jest/globals';
import bcrypt from 'bcryptjs';
import { hashPassword, htpasswdAuthenticator, htpasswdLine } from '../../../lib/token/authn/index.js';

describe('hashPassword makes a bcrypt hash at the given cost', () => {
  test('the hash verifies the password and carries the cost', async () => {
    const hash = await hashPassword('s3cret', 4);
    expect(hash).toMatch(/^\$2b\$04\$[./A-Za-z0-9]{53}$/);
    expect(bcrypt.compareSync('s3cret', hash)).toBe(true);
    expect(bcrypt.compareSync('S3cret', hash)).toBe(false);
  });
  test.each([3, 32, 4.5, Number.NaN])('cost %p is a TypeError naming "cost"', async (cost) => {
    await expect(hashPassword('pw', cost)).rejects.toThrow(new TypeError('"cost" must be an integer from 4 to 31'));
  });
  test('a non-string password is a TypeError', async () => {
    await expect(hashPassword(undefined as never, 4)).rejects.toThrow(TypeError);
  });
});

describe('htpasswdLine builds a user:hash line that htpasswdAuthenticator accepts', () => {
  test('the line round-trips through the authenticator', async () => {
    const line = await htpasswdLine('alice', 'pw', 4);
    expect(line).toMatch(/^alice:\$2b\$04\$/);
    const authenticate = htpasswdAuthenticator({ content: line });
    await expect(authenticate({ username: 'alice', password: 'pw', service: 's' })).resolves.toEqual({ subject: 'alice' });
  });
  test.each([
    ['', 'empty'],
    ['a:b', 'colon'],
    ['a\nb', 'LF'],
    ['a\rb', 'CR'],
    ['#admin', 'leading #'],
    [' alice', 'leading space'],
  ])('user %j (%s) is a TypeError', async (user) => {
    await expect(htpasswdLine(user, 'pw', 4)).rejects.toThrow(TypeError);
  });
});
