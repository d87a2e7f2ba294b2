import bcrypt from 'bcryptjs';
import { readFileSync } from 'node:fs';
import type { DemoOptions } from './options.js';

/** The passwords of demo/users.htpasswd, shown only where the file really holds them. */
const KNOWN: Record<string, string> = { alice: 'wonderland', bob: 'builder' };

/** A user the banner can show, with the password when it is a known demo one. */
export interface BannerAccount {
  name: string;
  password?: string;
}

/**
 * The accounts of the --users file: names from its lines, and the demo password of alice or bob
 * only when the file's hash still matches it (a file of one's own never gets them printed).
 */
export function htpasswdAccounts(file: string): BannerAccount[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const accounts: BannerAccount[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.replace(/\r$/, '');
    if (trimmed.trim() === '' || trimmed.trim().startsWith('#') || !trimmed.includes(':')) continue;
    const name = trimmed.slice(0, trimmed.indexOf(':'));
    const hash = trimmed.slice(trimmed.indexOf(':') + 1).trim();
    const known = KNOWN[name];
    accounts.push(known !== undefined && bcrypt.compareSync(known, hash) ? { name, password: known } : { name });
  }
  return accounts;
}

/** The "Accounts" part of the banner: every backend the demo logs in against. */
export function accountLines(options: DemoOptions, accounts: BannerAccount[]): string {
  const width = Math.max(0, ...accounts.map((a) => a.name.length));
  const lines = [`Accounts in ${options.users}:`];
  if (accounts.length === 0) lines.push('  (none)');
  for (const a of accounts) lines.push(`  ${a.name.padEnd(width)} / ${a.password ?? '(password as set in the file)'}`);
  if (options.ldap) {
    lines.push(`LDAP users of ${options.ldap.url} under ${options.ldap.baseDN} (${options.ldap.userFilter}), groups from ${options.ldap.groupAttribute} as the "groups" label`);
  }
  if (options.oidc) {
    lines.push(`CI jobs: docker login -u oidc --password-stdin with an ID token of ${options.oidc.issuers.join(', ')} for audience ${options.oidc.audience}`);
  }
  return lines.join('\n');
}
