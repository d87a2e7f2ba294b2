import { EngineError } from './engine-error.js';

/** dockerd's detach keys when neither the request nor the exec names any. */
export const DEFAULT_DETACH_KEYS = 'ctrl-p,ctrl-q';

/** The control keys beyond ctrl-a … ctrl-z that dockerd's term.ToBytes knows, with their bytes. */
const CONTROL: Record<string, number> = { '@': 0, '[': 27, '\\': 28, ']': 29, '^': 30, _: 31 };

/**
 * The bytes of a detach key list (`ctrl-p,ctrl-q`, `ctrl-a,d`, `ctrl-\\`), as dockerd reads the
 * `detachKeys` query, an exec's `DetachKeys` and the CLI's config.json `detachKeys`: each
 * comma-separated key is one character or `ctrl-` and a letter or one of `@[\]^_`. Anything
 * else is a 400 in dockerd's words.
 *
 * @example
 * detachKeyBytes('ctrl-p,ctrl-q'); // <Buffer 10 11>
 */
export function detachKeyBytes(keys: string): Buffer {
  const invalid = (): EngineError => EngineError.invalidParameter(`Invalid detach keys (${keys}) provided`);
  const out: number[] = [];
  for (const key of keys.split(',')) {
    const lower = key.toLowerCase();
    if (lower.startsWith('ctrl-') && key.length === 6) {
      const c = lower[5] as string;
      if (c >= 'a' && c <= 'z') out.push(c.charCodeAt(0) - 96);
      else if (c in CONTROL) out.push(CONTROL[c] as number);
      else throw invalid();
    } else if (key.length === 1) {
      out.push(key.charCodeAt(0));
    } else {
      throw invalid();
    }
  }
  if (out.length === 0 || out.some((b) => b > 0xff)) throw invalid();
  return Buffer.from(out);
}

/**
 * Watches a TTY attach's input for the detach sequence, as dockerd's escape proxy does: bytes
 * pass through as they come, except a run that may start the sequence, which is held until it
 * either completes (then nothing of it passes, and the attach detaches) or breaks (then it passes).
 */
export class DetachWatcher {
  private held = 0;

  constructor(private readonly keys: Buffer) {}

  /** The bytes to pass on, and whether the sequence completed (what follows it is dropped). */
  push(chunk: Buffer): { data: Buffer; detached: boolean } {
    const out: number[] = [];
    for (const byte of chunk) {
      if (byte === this.keys[this.held]) {
        this.held++;
        if (this.held === this.keys.length) return { data: Buffer.from(out), detached: true };
        continue;
      }
      // A broken run passes as it was typed; the byte that broke it may start a new one.
      for (let i = 0; i < this.held; i++) out.push(this.keys[i] as number);
      this.held = 0;
      if (byte === this.keys[0]) {
        this.held = 1;
        if (this.keys.length === 1) return { data: Buffer.from(out), detached: true };
      } else {
        out.push(byte);
      }
    }
    return { data: Buffer.from(out), detached: false };
  }
}
