import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { htpasswdLine } from '../token/authn/index.js';
import { UsageError, type CliIo } from './io.js';
import { writeFileAtomic } from '../fs/atomic-file.js';

export const htpasswdHelp = `Usage: dockgate htpasswd FILE USER [--cost N] < password

Adds USER to the htpasswd FILE (bcrypt), or replaces the user's line. The file is replaced
atomically (a new file renamed over it), keeping its mode and owner. The password is read
from standard input (first line), never from the command line, so it stays out of shell history.
`;

/** `dockgate htpasswd`: adds or replaces one bcrypt line. */
export async function htpasswd(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { cost: { type: 'string', default: '10' } }, allowPositionals: true, strict: true });
  const [file, user] = positionals;
  if (!file || !user || positionals.length > 2) throw new UsageError('FILE and USER are required');
  const cost = Number(values.cost);
  if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new UsageError('--cost must be an integer from 4 to 31');
  const password = (await io.readStdin()).split(/\r?\n/)[0] ?? '';
  if (password.length === 0) throw new UsageError('no password on standard input');
  let line: string;
  try {
    line = await htpasswdLine(user, password, cost);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split(/\r?\n/).filter((l) => l.length > 0) : [];
  const kept = lines.filter((l) => !l.startsWith(`${user}:`));
  // Atomically: the token server re-reads this file when it changes, maybe mid-write.
  await writeFileAtomic(file, [...kept, line].join('\n') + '\n', { mode: 0o600, keepMode: true, syncDirectory: true });
  io.stdout(`${kept.length === lines.length ? 'added' : 'updated'} ${user} in ${file}\n`);
  return 0;
}
