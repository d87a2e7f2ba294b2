/**
 * `docker run -d ARGS` against engine `e` (`{ name, socket }`), through `docker(socket, args)`;
 * a failed one is removed and made again, at most five times (dockerd on a loaded machine now and
 * then fails a start with an overlay2 or runc error), and printed. Resolves with the id.
 */
export async function runDetached(docker, e, args) {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await docker(e.socket, ['run', '-d', ...args])).stdout.trim();
    } catch (error) {
      const id = String(error.stdout ?? '').trim();
      if (id !== '') await docker(e.socket, ['rm', '-f', id]).catch(() => undefined);
      if (attempt >= 5) throw error;
      console.log(`  (${e.name}: a start failed and is made again: ${String(error.stderr ?? error.message).split('\n')[0]})`);
    }
  }
}
