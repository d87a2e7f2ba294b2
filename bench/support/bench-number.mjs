/**
 * A positive number from the environment (BENCH_DURATION=20 npm run bench:token), or the
 * default: the benches' knobs, read the same way everywhere.
 */
export function benchNumber(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number`);
  return value;
}
