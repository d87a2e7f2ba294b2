/** `NAME=value` entries (a container's Env) as the environment object `spawn` takes. */
export function envRecord(entries: readonly string[]): Record<string, string> {
  return Object.fromEntries(entries.map((entry) => {
    const i = entry.indexOf('=');
    return i === -1 ? [entry, ''] : [entry.slice(0, i), entry.slice(i + 1)];
  }));
}
