/**
 * Every runtime error dockgate raises is a DockgateError with a stable code, so callers switch on
 * `err.code`; and a host hook's broken result is the server's fault, answered server_error.
 */
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { AuthenticatorResultError, DockgateError } from '../../lib/index.js';
import { demultiplex, EngineListenError, FrameDecoder, SlowEventsSubscriberError, StdcopyFramingError, encodeFrame, listenEngine } from '../../lib/engine/index.js';
import { UsageError } from '../../lib/cli/io.js';
import { runCli } from '../../lib/cli/run-cli.js';
import { basic, SERVICE, tokenApp } from '../support/token-fixture.js';

function codeOf(err: unknown): string | undefined {
  return err instanceof DockgateError ? err.code : undefined;
}

describe('an authenticator resolving to an identity without a subject is a server_error reported to onError', () => {
  test.each([['an empty subject', { subject: '' }], ['no subject at all', {}]])('%s: 500 server_error, onError gets an AuthenticatorResultError, the next request the same', async (_name, identity) => {
    const { app, errors } = tokenApp({ authenticate: async () => identity as { subject: string } });
    for (let i = 0; i < 2; i += 1) {
      const res = await request(app).get('/token').query({ service: SERVICE }).set('Authorization', basic('alice', 'wonderland'));
      expect(res.status).toBe(500);
      expect(res.body.error).toBe('server_error');
      expect(JSON.stringify(res.body)).not.toMatch(/subject/);
    }
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(AuthenticatorResultError);
    expect(errors[0]).not.toBeInstanceOf(TypeError);
    expect(codeOf(errors[0])).toBe('ERR_AUTHENTICATOR_RESULT');
  });
});

describe('stdcopy framing errors are StdcopyFramingError (ERR_STDCOPY_FRAMING)', () => {
  test('an unknown stream type, and a stream that ends inside a frame', async () => {
    let thrown: unknown;
    try {
      new FrameDecoder().push(Buffer.from([9, 0, 0, 0, 0, 0, 0, 0]));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StdcopyFramingError);
    expect(codeOf(thrown)).toBe('ERR_STDCOPY_FRAMING');
    const truncated = demultiplex(Readable.from([encodeFrame(1, Buffer.from('abc')).subarray(0, 9)]), new PassThrough(), new PassThrough());
    await expect(truncated).rejects.toBeInstanceOf(StdcopyFramingError);
  });
});

describe('listenEngine refusing its socket path is EngineListenError (ERR_ENGINE_LISTEN)', () => {
  test('a regular file where the socket should be', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'dockgate-listen-')), 'engine.sock');
    writeFileSync(path, 'not a socket');
    const failure = await listenEngine(express(), { socket: path }).then(() => undefined, (err: unknown) => err);
    expect(failure).toBeInstanceOf(EngineListenError);
    expect(codeOf(failure)).toBe('ERR_ENGINE_LISTEN');
  });
});

describe('a dropped events subscriber ends with SlowEventsSubscriberError (ERR_EVENTS_SUBSCRIBER_SLOW)', () => {
  test('a subscriber that never reads', async () => {
    const { EventBus, MAX_PENDING_EVENTS } = await import('../../lib/engine/runtime/local/event-bus.js');
    const bus = new EventBus();
    const stalled = bus.subscribe({ filters: new Map(), signal: new AbortController().signal });
    const failed = new Promise<Error>((resolve) => stalled.once('error', resolve));
    for (let i = 0; i <= MAX_PENDING_EVENTS; i += 1) bus.publish('start', { id: 'c', name: '/c', image: 'busybox', labels: {} });
    const err = await failed;
    expect(err).toBeInstanceOf(SlowEventsSubscriberError);
    expect(codeOf(err)).toBe('ERR_EVENTS_SUBSCRIBER_SLOW');
  });
});

describe('the CLI\'s usage errors are DockgateErrors (ERR_CLI_USAGE) and still exit 2 with the help', () => {
  test('htpasswd without its arguments', async () => {
    expect(codeOf(new UsageError('x'))).toBe('ERR_CLI_USAGE');
    const err: string[] = [];
    const code = await runCli(['htpasswd'], { stdout: () => {}, stderr: (t) => err.push(t), readStdin: async () => '' });
    expect(code).toBe(2);
    expect(err.join('')).toMatch(/FILE and USER are required/);
  });
});
