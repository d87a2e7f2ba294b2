import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { testApp, testRuntime } from '../helpers.js';
import { registryHost } from '../../../lib/engine/images/registry/registry-login.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd } from '../../support/peers.js';

describe('POST /auth (docker login with DOCKER_HOST set)', () => {
  test('a runtime without registry login answers 501 naming the feature', async () => {
    const res = await request(testApp(testRuntime().runtime)).post('/v1.28/auth').send({ username: 'a', password: 'secret-pw', serveraddress: '127.0.0.1:5000' });
    expect(res.status).toBe(501);
    expect(res.body.message).toMatch(/registry login \(POST \/auth\) is not supported/);
    expect(JSON.stringify(res.body)).not.toContain('secret-pw');
  });
  test('a body that is not a JSON object is a 400', async () => {
    const res = await request(testApp(testRuntime().runtime)).post('/v1.28/auth').set('Content-Type', 'application/json').send('[1]');
    expect(res.status).toBe(400);
  });
});

describe('serveraddress names the registry as the CLI sends it', () => {
  test('host[:port], with or without a scheme and path; Docker Hub\'s names are registry-1.docker.io', () => {
    expect(registryHost('127.0.0.1:5000')).toBe('127.0.0.1:5000');
    expect(registryHost('http://127.0.0.1:5000/v2/')).toBe('127.0.0.1:5000');
    expect(registryHost('https://index.docker.io/v1/')).toBe('registry-1.docker.io');
    expect(registryHost('')).toBe('registry-1.docker.io');
  });
  test('anything else is a 400', () => {
    expect(() => registryHost('a b')).toThrow(/serveraddress/);
  });
});

describeWithPeers('POST /auth through the Docker runtime is dockerd\'s own answer', [dockerd()], () => {
  test('an unreachable registry: the same status and words as dockerd', async () => {
    const body = { username: 'a', password: 'b', serveraddress: '127.0.0.1:1' };
    const ours = await request(testApp(dockerRuntime({ socketPath: '/var/run/docker.sock' }), '1.12-1.41')).post('/v1.41/auth').send(body);
    expect(ours.status).toBe(500);
    expect(ours.body.message).toMatch(/^Get "http:\/\/127\.0\.0\.1:1\/v2\/": .*connection refused/);
  });
});
