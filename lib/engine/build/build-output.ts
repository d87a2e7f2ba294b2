import { PassThrough } from 'node:stream';

/**
 * JSON as Go's encoding/json writes it: `<`, `>` and `&` (and U+2028/9) as `\u00XX` escapes, so
 * the stream is byte for byte what dockerd sends (`"RUN a \u0026\u0026 b"`).
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The classic builder's message stream (dockerd's streamformatter): one JSON object per line,
 * `\r\n`-terminated. With `quiet` (`q=1`) only the final ID and an error are written.
 */
export class BuildOutput {
  readonly stream = new PassThrough();
  constructor(readonly quiet: boolean) {}

  #write(message: unknown): void {
    if (!this.stream.writableEnded) this.stream.write(`${goJson(message)}\r\n`);
  }

  /** A `{"stream": …}` message (shown by the CLI as it is). */
  text(text: string): void {
    if (!this.quiet) this.#write({ stream: text });
  }

  /** Output every build writes, quiet or not (the final ID of a quiet build). */
  always(text: string): void {
    this.#write({ stream: text });
  }

  aux(value: unknown): void {
    this.#write({ aux: value });
  }

  /** Raw JSON-lines progress (a FROM's pull), passed through unless quiet. */
  raw(line: string): void {
    if (!this.quiet && !this.stream.writableEnded) this.stream.write(line.endsWith('\n') ? line : `${line}\r\n`);
  }

  /** The failure: `errorDetail` (with the command's exit code when a RUN failed) and `error`. */
  fail(message: string, code?: number): void {
    this.#write({ errorDetail: { ...(code !== undefined ? { code } : {}), message }, error: message });
    this.stream.end();
  }

  end(): void {
    this.stream.end();
  }
}
