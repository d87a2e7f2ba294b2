import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { Readable } from 'node:stream';
import { EngineError, engineRouter, type ContainerRuntime } from '../../../lib/engine/index.js';
import { parsePullReference } from '../../../lib/engine-api/pull-reference.js';
import { testApp, testRuntime } from '../helpers.js';
import express from 'express';

/** The runtime with one method replaced (or removed), the others bound to it. */
function withMethod(base: ContainerRuntime, name: keyof ContainerRuntime, value: unknown): ContainerRuntime {
  return new Proxy(base, {
    get: (target, key) => {
      if (key === name) return value;
      const member = Reflect.get(target, key) as unknown;
      return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(target) : member;
    },
  });
}

/** Reads a JSON-lines body as text (supertest would try to parse it as one JSON document). */
const text = (res: request.Response, cb: (e: Error | null, body: string) => void): void => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (body += c));
  res.on('end', () => cb(null, body));
};
const lines = (body: string): unknown[] => body.trim().split('\n').map((l) => JSON.parse(l) as unknown);

describe('parsePullReference reads fromImage and tag as dockerd does', () => {
  test('the Docker CLI\'s fully qualified name and tag become the familiar reference', () => {
    expect(parsePullReference('docker.io/library/nope', '1')).toEqual({ ref: 'nope:1', path: 'library/nope', tagOrDigest: '1' });
  });
  test('tag replaces a tag inside fromImage; no tag at all means latest', () => {
    expect(parsePullReference('busybox:1', 'local').ref).toBe('busybox:local');
    expect(parsePullReference('busybox:1').ref).toBe('busybox:1');
    expect(parsePullReference('alice/app').ref).toBe('alice/app:latest');
  });
  test('a registry host stays in the reference and out of the path', () => {
    expect(parsePullReference('127.0.0.1:5000/busybox', 'local')).toEqual({ ref: '127.0.0.1:5000/busybox:local', path: 'busybox', tagOrDigest: 'local' });
  });
  test('a tag with a colon is a digest', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(parsePullReference('busybox', digest)).toEqual({ ref: `busybox@${digest}`, path: 'library/busybox', tagOrDigest: digest });
  });
  test('malformed input is a 400 with dockerd\'s words', () => {
    const message = (f: () => unknown): string => {
      try {
        f();
      } catch (error) {
        expect(error).toBeInstanceOf(EngineError);
        expect((error as EngineError).status).toBe(400);
        return (error as EngineError).message;
      }
      throw new Error('no error');
    };
    expect(message(() => parsePullReference('UPPER', '1'))).toBe('invalid reference format: repository name must be lowercase');
    expect(message(() => parsePullReference('busybox', 'bad tag'))).toBe('invalid tag format');
    expect(message(() => parsePullReference('a//b', '1'))).toBe('invalid reference format');
    expect(message(() => parsePullReference('busybox@sha256:xyz'))).toBe('invalid reference format');
  });
});

describe('POST /images/create of an image a local runtime has: 200 and dockerd\'s "up to date" progress', () => {
  const app = testApp(testRuntime().runtime);
  test('JSON lines "Pulling from <path>" (id = tag) and "Status: Image is up to date for <ref>"', async () => {
    const res = await request(app).post('/v1.28/images/create?fromImage=docker.io%2Flibrary%2Fbusybox&tag=latest').buffer(true).parse(text);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(lines(res.body as string)).toEqual([
      { status: 'Pulling from library/busybox', id: 'latest' },
      { status: 'Status: Image is up to date for busybox:latest' },
    ]);
  });
  test('at API 1.41 too, and unversioned', async () => {
    for (const path of ['/v1.41/images/create?fromImage=slow&tag=1', '/images/create?fromImage=slow&tag=1']) {
      const res = await request(testApp(testRuntime().runtime, '1.12-1.41')).post(path).buffer(true).parse(text);
      expect(res.status).toBe(200);
      expect(lines(res.body as string)).toContainEqual({ status: 'Status: Image is up to date for slow:1' });
    }
  });
});

describe('POST /images/create of an image a local runtime does not have: 404 saying it cannot pull', () => {
  const app = testApp(testRuntime().runtime);
  test('404 {"message"} naming the image, Content-Type exactly application/json', async () => {
    const res = await request(app).post('/v1.28/images/create?fromImage=docker.io%2Flibrary%2Fnope&tag=1');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ message: 'No such image: nope:1 (this engine cannot pull images; it runs only the images it is configured with)' });
  });
  test('a known name with an unknown tag is not there either', async () => {
    const res = await request(app).post('/v1.28/images/create?fromImage=busybox&tag=2');
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/^No such image: busybox:2 /);
  });
});

describe('POST /images/create: bad or unsupported requests', () => {
  const app = testApp(testRuntime().runtime);
  test('no fromImage is 400; fromSrc (import) on a runtime without importImage is 501 naming it', async () => {
    const missing = await request(app).post('/v1.28/images/create');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: 'fromImage is required' });
    const imported = await request(app).post('/v1.28/images/create?fromSrc=-');
    expect(imported.status).toBe(501);
    expect(imported.body).toEqual({ message: 'importing images (docker import) is not supported by the scripted runtime' });
  });
  test('a malformed reference is 400, plain text at API 1.23 like every old-version error', async () => {
    const res = await request(app).post('/v1.28/images/create?fromImage=UPPER&tag=1');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'invalid reference format: repository name must be lowercase' });
    const old = await request(app).post('/v1.23/images/create?fromImage=busybox&tag=x%20y');
    expect(old.status).toBe(400);
    expect(old.text).toBe('invalid tag format\n');
  });
  test('a runtime without pull() answers 501', async () => {
    const noPull = withMethod(testRuntime().runtime, 'pull', undefined);
    const res = await request(express().use(engineRouter(noPull))).post('/v1.28/images/create?fromImage=busybox&tag=latest');
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ message: 'pulling images is not supported by the scripted runtime' });
  });
});

describe('POST /images/create: a failure after the 200 is reported in-band as dockerd does', () => {
  test('the stream ends with {"errorDetail":{"message"},"error"}', async () => {
    const failing = withMethod(testRuntime().runtime, 'pull', async () =>
      Readable.from((async function* () {
        yield Buffer.from('{"status":"Pulling from library/busybox","id":"latest"}\n');
        throw EngineError.system('unexpected EOF');
      })()),
    );
    const res = await request(express().use(engineRouter(failing))).post('/v1.28/images/create?fromImage=busybox&tag=latest').buffer(true).parse(text);
    expect(res.status).toBe(200);
    expect(lines(res.body as string)).toEqual([
      { status: 'Pulling from library/busybox', id: 'latest' },
      { errorDetail: { message: 'unexpected EOF' }, error: 'unexpected EOF' },
    ]);
  });
});
