import { constants } from 'node:os';
import { EngineError } from './engine-error.js';

const BY_NUMBER = new Map<number, NodeJS.Signals>();
for (const [name, number] of Object.entries(constants.signals) as [NodeJS.Signals, number][]) {
  if (!BY_NUMBER.has(number)) BY_NUMBER.set(number, name);
}

/**
 * The `signal` parameter of `POST /containers/{id}/kill`, as dockerd's `signal.ParseSignal`
 * reads it: a name with or without `SIG`, any case (the Docker CLI's `--sig-proxy` sends `INT`,
 * `TERM`…), or a number. Unknown names and 0 are a 400 `Invalid signal: X`, as in dockerd; so is
 * a number this host has no name for (dockerd answers that one with a 500, which bad input
 * should never get).
 *
 * @example
 * parseSignal('term', 'SIGKILL'); // 'SIGTERM'
 * parseSignal(undefined, 'SIGKILL'); // 'SIGKILL'
 */
export function parseSignal(value: string | undefined, fallback: NodeJS.Signals): NodeJS.Signals {
  if (value === undefined || value.trim() === '') return fallback;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const named = BY_NUMBER.get(Number(text));
    if (named && Number(text) > 0) return named;
  } else {
    const name = `SIG${text.toUpperCase().replace(/^SIG/, '')}`;
    if (Object.hasOwn(constants.signals, name)) return name as NodeJS.Signals;
  }
  throw EngineError.invalidParameter(`Invalid signal: ${text}`);
}

/** The signal's number on this host (SIGKILL → 9), for `128 + n` exit codes and event attributes. */
export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}

/**
 * A container's stop signal: the create body's `StopSignal` when it names one, else SIGTERM
 * (dockerd's default).
 *
 * @example
 * stopSignal('SIGQUIT'); // 'SIGQUIT'
 * stopSignal(undefined); // 'SIGTERM'
 */
export function stopSignal(value: unknown): NodeJS.Signals {
  if (typeof value !== 'string') return 'SIGTERM';
  try {
    return parseSignal(value, 'SIGTERM');
  } catch {
    return 'SIGTERM';
  }
}
