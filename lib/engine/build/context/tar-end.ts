import type { Extract } from 'tar-stream';

/** tar-stream 3's extractor state read at the end of its input (its own fields, pinned by package-lock). */
interface ExtractState {
  _missing: number;
  _stream: unknown;
  _longHeader: boolean;
  _buffer: { buffered: number };
  _final(cb: (error?: Error | null) => void): void;
}

/**
 * Lets `ex` accept a tar that ends right after its last entry's data, without that entry's
 * padding to 512 bytes or the two zero blocks that close an archive. The Docker CLI sends such a
 * context for `docker build -f ../Dockerfile .` (it appends the outside Dockerfile and a
 * `.dockerignore` naming it, and leaves the archive unclosed), and dockerd's Go reader takes it.
 * Only that end is taken: input that stops inside an entry's data, inside a header or inside a
 * long-name or pax record is still "Unexpected end of data".
 */
export function acceptUnclosedTar(ex: Extract): void {
  const state = ex as unknown as ExtractState;
  if (typeof state._final !== 'function' || typeof state._missing !== 'number' || !('_stream' in state) || typeof state._buffer?.buffered !== 'number') return;
  const final = state._final.bind(ex);
  state._final = (cb) => {
    // Between entries with only the last one's padding left: nothing of the archive is missing.
    if (state._missing > 0 && state._missing < 512 && state._stream === null && state._longHeader === false && state._buffer.buffered === 0) state._missing = 0;
    final(cb);
  };
}
