import { describe, expect, test } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { engineRouter } from '../../../lib/engine/index.js';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';

describe('POST /images/create?fromSrc=… (docker import): a 501 naming it where the runtime cannot import, and no pull', () => {
  test('a runtime without importImage answers 501 naming docker import; fromImage still means a pull', async () => {
    const app = express().use(engineRouter(scriptedRuntime({ images: { 'busybox:latest': async () => ({}) } }), '1.24-1.41'));
    const res = await request(app).post('/v1.41/images/create?fromSrc=-&repo=x').set('Content-Type', 'application/x-tar').send(Buffer.alloc(512));
    expect(res.status).toBe(501);
    expect(res.body.message).toContain('importing images (docker import)');
    // JSON lines, not one JSON document: read as text.
    const pull = await request(app).post('/v1.41/images/create?fromImage=busybox&tag=latest').buffer(true).parse((res, done) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => done(null, text));
    });
    expect(pull.status).toBe(200);
    expect(pull.body).toContain('busybox');
  });
});
