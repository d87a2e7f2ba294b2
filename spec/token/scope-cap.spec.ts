import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { MAX_SCOPES } from '../../lib/token/endpoints/token-params.js';
import { basic, claimsOf, SERVICE, tokenApp } from '../support/token-fixture.js';

const scopes = (n: number) => Array.from({ length: n }, (_, i) => `repository:alice/app${i}:pull`);

describe(`a token request names at most ${MAX_SCOPES} resource scopes; more is invalid_request (RFC 6749 JSON, 400)`, () => {
  test('the cap is 32', () => {
    expect(MAX_SCOPES).toBe(32);
  });

  test('GET with 32 repeated scope parameters is served, every one granted', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&${scopes(32).map((s) => `scope=${s}`).join('&')}`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(200);
    expect((claimsOf(res.body.token).access as unknown[])).toHaveLength(32);
  });

  test('GET with 33 repeated scope parameters is 400 invalid_request, nothing issued', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&${scopes(33).map((s) => `scope=${s}`).join('&')}`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('at most 32') });
  });

  test('GET with 400 scopes in one space-separated parameter is 400 invalid_request', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&scope=${encodeURIComponent(scopes(400).join(' '))}`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('POST (password grant) with 33 space-separated scopes is 400 invalid_request', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').type('form').send({
      grant_type: 'password', client_id: 'containerd-client', username: 'alice', password: 'wonderland', service: SERVICE, scope: scopes(33).join(' '),
    });
    expect(res.status).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.error).toBe('invalid_request');
  });

  test('POST (refresh grant) with 33 scopes is 400 invalid_request', async () => {
    const { app } = tokenApp();
    const login = await request(app).get(`/token?client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'));
    const res = await request(app).post('/token').type('form').send({
      grant_type: 'refresh_token', client_id: 'docker', refresh_token: login.body.refresh_token, service: SERVICE, scope: scopes(33).join(' '),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});
