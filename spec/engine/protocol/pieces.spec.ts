import { describe, test, expect } from '@jest/globals';
import { PassThrough, Readable } from 'node:stream';
import { encodeFrame, FrameDecoder, demultiplex, EngineError, ENGINE_ERROR_STATUS, familiarImageRef } from '../../../lib/engine/index.js';
import { boolValue, parseTail, parseInteger } from '../../../lib/engine/router/http/query.js';
import { parseTimestamp, parseFilters } from '../../../lib/engine-api/filters.js';
import { frameHeader } from '../../../lib/engine-api/stdcopy.js';
import { formatRfc3339Nano } from '../../../lib/engine/runtime/local/log-reader.js';

describe('query booleans follow dockerd BoolValue', () => {
  test('"", 0, no, false, none (any case, trimmed) and absent are false', () => {
    for (const v of [undefined, '', '0', 'no', 'false', 'FALSE', ' none ', 'No']) expect(boolValue(v)).toBe(false);
  });
  test('anything else is true', () => {
    for (const v of ['1', 'true', 'yes', 'on', 'x', '2']) expect(boolValue(v)).toBe(true);
  });
});

describe('logs/list parameters', () => {
  test('tail: an integer, or all lines for anything else', () => {
    expect(parseTail('10')).toBe(10);
    expect(parseTail('0')).toBe(0);
    expect(parseTail('all')).toBeUndefined();
    expect(parseTail('-1')).toBeUndefined();
  });
  test('timestamps: Go client "<sec>.<nanos>", plain seconds, RFC 3339; garbage is a 400', () => {
    expect(parseTimestamp('1700000000.500000000', 'since')).toBe(1700000000500);
    expect(parseTimestamp('1700000000', 'since')).toBe(1700000000000);
    expect(parseTimestamp('2023-11-14T22:13:20Z', 'since')).toBe(1700000000000);
    expect(() => parseTimestamp('yesterday', 'since')).toThrow(EngineError);
  });
  test('integers: a malformed limit is a 400, not a 500', () => {
    expect(parseInteger('5', 'limit')).toBe(5);
    expect(() => parseInteger('abc', 'limit')).toThrow(/invalid value for limit/);
  });
  test('filters: map form, legacy array form, unknown names and bad JSON are 400', () => {
    expect([...parseFilters('{"container":{"abc":true,"off":false}}', ['container']).get('container')!]).toEqual(['abc']);
    expect([...parseFilters('{"type":["container"]}', ['type']).get('type')!]).toEqual(['container']);
    expect(() => parseFilters('{"nope":{"x":true}}', ['type'])).toThrow("Invalid filter 'nope'");
    expect(() => parseFilters('{bad', ['type'])).toThrow(/invalid filters/);
    expect(() => parseFilters('[1]', ['type'])).toThrow(/invalid filters/);
  });
});

describe('stdcopy framing: [stream,0,0,0,size BE] + payload', () => {
  test('encodes the 8-byte header', () => {
    expect([...frameHeader(2, 258)]).toEqual([2, 0, 0, 0, 0, 0, 1, 2]);
    expect([...encodeFrame(1, Buffer.from('hi'))]).toEqual([1, 0, 0, 0, 0, 0, 0, 2, 104, 105]);
  });
  test('decodes frames split at any byte boundary', () => {
    const wire = Buffer.concat([encodeFrame(1, Buffer.from('hello\n')), encodeFrame(2, Buffer.from('oops\n')), encodeFrame(1, Buffer.alloc(0))]);
    for (let cut = 0; cut <= wire.length; cut++) {
      const d = new FrameDecoder();
      const frames = [...d.push(wire.subarray(0, cut)), ...d.push(wire.subarray(cut))];
      expect(frames.map((f) => [f.stream, f.payload.toString()])).toEqual([[1, 'hello\n'], [2, 'oops\n'], [1, '']]);
      expect(d.buffered).toBe(0);
    }
  });
  test('an unknown stream type is an error', () => {
    expect(() => new FrameDecoder().push(Buffer.from([9, 0, 0, 0, 0, 0, 0, 0]))).toThrow(/Unrecognized input header: 9/);
  });
  test('demultiplex splits into stdout/stderr, systemerr to stderr, and rejects a truncated frame', async () => {
    const out = new PassThrough();
    const err = new PassThrough();
    const wire = [encodeFrame(1, Buffer.from('a')), encodeFrame(2, Buffer.from('b')), encodeFrame(3, Buffer.from('c'))];
    await demultiplex(Readable.from(wire), out, err);
    expect(out.read().toString()).toBe('a');
    expect(err.read().toString()).toBe('bc');
    await expect(demultiplex(Readable.from([encodeFrame(1, Buffer.from('abc')).subarray(0, 9)]), out, err)).rejects.toThrow(/inside a frame/);
  });
});

describe('engine errors map classes to statuses like moby errdefs', () => {
  test('each class has dockerd\'s status', () => {
    expect(ENGINE_ERROR_STATUS).toEqual({
      NotModified: 304, InvalidParameter: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409,
      System: 500, NotImplemented: 501, Unavailable: 503,
    });
    expect(EngineError.notFound('x')).toMatchObject({ status: 404, code: 'ERR_ENGINE_NOT_FOUND', kind: 'NotFound' });
  });
  test('fromStatus maps unmapped 4xx to InvalidParameter and 5xx to System (Go client FromStatusCode)', () => {
    expect(EngineError.fromStatus(418, 'x').kind).toBe('InvalidParameter');
    expect(EngineError.fromStatus(502, 'x').kind).toBe('System');
    expect(EngineError.fromStatus(409, 'x').kind).toBe('Conflict');
  });
});

describe('image references are compared in familiar form', () => {
  test('default registry and library/ dropped, :latest added', () => {
    expect(familiarImageRef('docker.io/library/busybox')).toBe('busybox:latest');
    expect(familiarImageRef('busybox')).toBe('busybox:latest');
    expect(familiarImageRef('busybox:local')).toBe('busybox:local');
    expect(familiarImageRef('localhost:5000/app')).toBe('localhost:5000/app:latest');
  });
});

describe('timestamps are Go RFC3339Nano (trailing zeros trimmed)', () => {
  test('formats milliseconds with fraction', () => {
    expect(formatRfc3339Nano(1700000000123.5)).toBe('2023-11-14T22:13:20.1235Z');
    expect(formatRfc3339Nano(1700000000000)).toBe('2023-11-14T22:13:20Z');
  });
});

describe('demultiplex stops when a destination closes instead of waiting for a drain that never comes', () => {
  test('a closed stdout ends the copy', async () => {
    const { PassThrough, Writable } = await import('node:stream');
    const { demultiplex, encodeFrame } = await import('../../../lib/engine/index.js');
    const source = new PassThrough();
    const stdout = new Writable({ highWaterMark: 1, write: (_chunk, _enc, cb) => { setTimeout(cb, 10_000).unref(); } });
    const stderr = new PassThrough();
    const copying = demultiplex(source, stdout, stderr);
    source.write(encodeFrame(1, Buffer.alloc(64, 'x')));
    source.write(encodeFrame(1, Buffer.alloc(64, 'y')));
    await new Promise((r) => setTimeout(r, 50));
    stdout.destroy();
    source.end();
    await expect(Promise.race([copying.then(() => 'returned'), new Promise((r) => setTimeout(() => r('hung'), 2000))])).resolves.toBe('returned');
  });
});

describe('an events subscriber that stops reading is dropped, not buffered without bound', () => {
  test('beyond MAX_PENDING_EVENTS unread events its stream ends with an error; others keep getting events', async () => {
    const { EventBus, MAX_PENDING_EVENTS } = await import('../../../lib/engine/runtime/local/event-bus.js');
    const bus = new EventBus();
    const stalled = bus.subscribe({ filters: new Map(), signal: new AbortController().signal });
    const failed = new Promise<Error>((resolve) => stalled.once('error', resolve));
    const reader = bus.subscribe({ filters: new Map(), signal: new AbortController().signal });
    let read = 0;
    reader.on('data', () => { read += 1; });
    const actor = { id: 'c', name: '/c', image: 'busybox', labels: {} };
    // Events come in bursts (one per API call); the reader keeps up between them, the stalled one never reads.
    for (let burst = 0; burst < 11; burst++) {
      for (let i = 0; i < 100; i++) bus.publish('start', actor);
      await new Promise((r) => setImmediate(r));
    }
    expect((await failed).message).toMatch(/too slow/);
    expect(read).toBe(1100);
    expect(stalled.destroyed).toBe(true);
    expect(MAX_PENDING_EVENTS).toBeLessThan(1100);
  });
});
