/**
 * One record of a container's log file, as it lies on disk:
 *
 *     time     float64 BE   milliseconds since the epoch (sub-millisecond part kept)
 *     header   8 bytes      the stdcopy frame header: stream (1 stdout, 2 stderr), 0 0 0, length uint32 BE
 *     payload  length bytes the output exactly as the container wrote it
 *     trailer  uint32 BE    length again, so the file can be walked backwards (tail)
 *
 * Binary rather than dockerd's JSON lines because it is what makes `docker logs` fast: a reader
 * sends `header + payload` as one slice of what it read (no JSON parse, no base64 or UTF-8
 * escaping, no copy), writing is one `writev` of the container's own buffers, and output that is
 * not text survives byte for byte. The trailer makes `tail` read only the end of a file.
 */
export const RECORD_HEAD = 16;
export const RECORD_TRAILER = 4;
export const RECORD_OVERHEAD = RECORD_HEAD + RECORD_TRAILER;
/** Larger chunks are split into records of at most this payload, so a reader's block always holds a whole record. */
export const MAX_PAYLOAD = 256 * 1024;
/** What a reader reads from a file at once. */
export const READ_BLOCK = 1024 * 1024;

/** The 16 bytes before a payload. */
export function recordHead(stream: 1 | 2, time: number, length: number): Buffer {
  const head = Buffer.allocUnsafe(RECORD_HEAD);
  head.writeDoubleBE(time, 0);
  head.writeUInt32BE(stream << 24, 8);
  head.writeUInt32BE(length, 12);
  return head;
}

/** The 4 bytes after a payload. */
export function recordTrailer(length: number): Buffer {
  const tail = Buffer.allocUnsafe(RECORD_TRAILER);
  tail.writeUInt32BE(length, 0);
  return tail;
}

/** A record found in a buffer, by where its parts are. */
export interface RecordView {
  stream: 1 | 2;
  time: number;
  /** Offset of the record in the buffer. */
  at: number;
  /** Payload length. */
  length: number;
}

/** The record starting at `at`, when a whole valid one is there; undefined when cut short or not a record. */
export function recordAt(buf: Buffer, at: number): RecordView | undefined {
  if (at + RECORD_OVERHEAD > buf.length) return undefined;
  const stream = buf[at + 8];
  const length = buf.readUInt32BE(at + 12);
  if ((stream !== 1 && stream !== 2) || buf[at + 9] !== 0 || buf[at + 10] !== 0 || buf[at + 11] !== 0 || length > MAX_PAYLOAD) return undefined;
  const end = at + RECORD_OVERHEAD + length;
  if (end > buf.length || buf.readUInt32BE(end - RECORD_TRAILER) !== length) return undefined;
  return { stream, time: buf.readDoubleBE(at), at, length };
}

/** The header and payload of a record in `buf`: a stdcopy frame, ready to send. */
export function frameOf(buf: Buffer, r: RecordView): Buffer {
  return buf.subarray(r.at + 8, r.at + RECORD_HEAD + r.length);
}

/** The payload of a record in `buf`. */
export function payloadOf(buf: Buffer, r: RecordView): Buffer {
  return buf.subarray(r.at + RECORD_HEAD, r.at + RECORD_HEAD + r.length);
}
