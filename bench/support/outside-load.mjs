// Load from outside: the autocannon CLI in a process of its own, as a user drives a server
// (`npx autocannon -c 32 -d 5 …`). In the bench's own process autocannon shares an event loop
// with the bench's bookkeeping; in its own process it is one more program competing for the
// cores, which is what the server meets in use. The result is autocannon's JSON (`-j`), the
// same object its API gives (requests.average/total, latency.p50/p99, non2xx, errors, timeouts).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('autocannon/package.json')), 'autocannon.js');

/**
 * Runs `autocannon -j` against `url` for `seconds` with `connections`, `method`, `headers` and
 * `body`; rejects on any non-2xx answer, error or timeout.
 */
export function outsideLoad({ url, seconds, connections, method = 'GET', headers = {}, body }) {
  const args = [CLI, '-j', '-c', String(connections), '-d', String(seconds), '-m', method];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  if (body !== undefined) args.push('-b', body);
  args.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.once('error', reject);
    child.once('close', (code) => {
      let result;
      try {
        result = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        reject(new Error(`autocannon exited with ${code} and no JSON result (${url})`));
        return;
      }
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
        return;
      }
      resolve(result);
    });
  });
}
