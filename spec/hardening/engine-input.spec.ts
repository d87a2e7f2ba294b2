/**
 * Hardening of the engine API over HTTP: every malformed body, query, id or version prefix gets
 * dockerd's `{"message": …}` with Content-Type exactly application/json and a 4xx status, never a
 * 500; secrets in a body are not echoed back in an error.
 */
import { describe, test, expect } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { engineRouter, type ContainerRuntime } from '../../lib/engine/index.js';
import { scriptedRuntime } from '../../lib/engine/runtime/scripted/index.js';
import { expectEngineError } from './support.js';

interface Harness {
  app: express.Express;
  failures: unknown[];
  release: () => void;
}

function harness(range = '1.12-1.42'): Harness {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const runtime: ContainerRuntime = scriptedRuntime({
    images: {
      'busybox:latest': ({ argv }) => ({ stdout: `${argv.slice(1).join(' ')}\n` }),
      'slow:1': async () => {
        await gate;
        return { exitCode: 0 };
      },
    },
  });
  const failures: unknown[] = [];
  const app = express();
  app.use(engineRouter(runtime, range, { onError: (e) => failures.push(e) }));
  return { app, failures, release: () => release() };
}

const JSON_TYPE = 'application/json';

async function create(app: express.Express, body: unknown, query = ''): Promise<request.Response> {
  return request(app).post(`/containers/create${query}`).set('Content-Type', JSON_TYPE).send(typeof body === 'string' ? body : JSON.stringify(body));
}

async function createdId(app: express.Express, body: unknown = { Image: 'busybox', Cmd: ['echo', 'hi'] }): Promise<string> {
  const res = await create(app, body);
  expect(res.status).toBe(201);
  return (res.body as { Id: string }).Id;
}

describe('POST /containers/create: a body that is not a JSON object is 400', () => {
  const bodies: [string, string, string | undefined, RegExp][] = [
    ['text/plain', 'hello', 'text/plain', /Content-Type specified \(text\/plain\) must be 'application\/json'/],
    ['no Content-Type with a body', '{"Image":"busybox"}', undefined, /must be 'application\/json'/],
    ['malformed JSON', '{"Image":', JSON_TYPE, /invalid JSON/],
    ['a JSON array', '[{"Image":"busybox"}]', JSON_TYPE, /Config cannot be empty/],
    ['JSON null', 'null', JSON_TYPE, /Config cannot be empty/],
    ['a JSON number', '42', JSON_TYPE, /Config cannot be empty/],
    ['a JSON string', '"busybox"', JSON_TYPE, /Config cannot be empty/],
    ['100000 nested arrays', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, JSON_TYPE, /Config cannot be empty/],
    ['100000 nested objects', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, JSON_TYPE, /Config cannot be empty/],
    ['an object without Image', '{"Cmd":["echo"]}', JSON_TYPE, /Config cannot be empty/],
  ];
  for (const [what, body, type, message] of bodies) {
    test(what, async () => {
      const { app, failures } = harness();
      const req = request(app).post('/containers/create');
      if (type) req.set('Content-Type', type);
      expectEngineError(await req.send(body), 400, message);
      expect(failures).toEqual([]);
    });
  }
  test('a body over maxBodyBytes (1 MiB) is 400 naming the limit', async () => {
    const { app, failures } = harness();
    const res = await create(app, { Image: 'busybox', Labels: { big: 'x'.repeat(1_100_000) } });
    expectEngineError(res, 400, /larger than 1048576 bytes/);
    expect(failures).toEqual([]);
  });
  test('an empty body with no Content-Type is "Config cannot be empty"', async () => {
    const { app } = harness();
    expectEngineError(await request(app).post('/containers/create'), 400, /Config cannot be empty/);
  });
  test('a JSON syntax error does not echo the body (an Env value may be a secret)', async () => {
    const { app } = harness();
    const res = await create(app, '{"Image":"busybox","Env":["TOKEN=s3cr3t", x]}');
    expectEngineError(res, 400, /invalid JSON/);
    expect(res.text).not.toContain('s3cr3t');
  });
});

describe('POST /containers/create: a field of the wrong JSON type is 400 naming the field (dockerd: 500 "json: cannot unmarshal …")', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['Image a number', { Image: 5 }, /Image/],
    ['Env a number', { Image: 'busybox', Env: 5 }, /Env/],
    ['Env a string', { Image: 'busybox', Env: 'A=1' }, /Env/],
    ['Env an object', { Image: 'busybox', Env: { A: '1' } }, /Env/],
    ['Env holding a number', { Image: 'busybox', Env: ['A=1', 2] }, /Env/],
    ['Cmd an object', { Image: 'busybox', Cmd: {} }, /Cmd/],
    ['Cmd a number', { Image: 'busybox', Cmd: 5 }, /Cmd/],
    ['Cmd holding null', { Image: 'busybox', Cmd: ['echo', null] }, /Cmd/],
    ['Entrypoint a boolean', { Image: 'busybox', Entrypoint: true }, /Entrypoint/],
    ['Labels a string', { Image: 'busybox', Labels: 'x' }, /Labels/],
    ['Labels an array', { Image: 'busybox', Labels: ['a=b'] }, /Labels/],
    ['Labels with a number value', { Image: 'busybox', Labels: { a: 1 } }, /Labels/],
    ['Tty a string', { Image: 'busybox', Tty: 'yes' }, /Tty/],
    ['OpenStdin a number', { Image: 'busybox', OpenStdin: 1 }, /OpenStdin/],
    ['WorkingDir a number', { Image: 'busybox', WorkingDir: 1 }, /WorkingDir/],
    ['HostConfig a string', { Image: 'busybox', HostConfig: 'x' }, /HostConfig/],
    ['HostConfig.AutoRemove a string', { Image: 'busybox', HostConfig: { AutoRemove: 'yes' } }, /AutoRemove/],
  ];
  for (const [what, body, message] of cases) {
    test(what, async () => {
      const { app, failures } = harness();
      expectEngineError(await create(app, body), 400, message);
      expect(failures).toEqual([]);
    });
  }
  test('a NUL byte in Cmd, Entrypoint or Env is 400 at create, not a failed start', async () => {
    const { app, failures } = harness();
    for (const body of [{ Cmd: ['echo', 'a\u0000b'] }, { Entrypoint: 'sh\u0000' }, { Env: ['A=\u0000'] }]) {
      expectEngineError(await create(app, { Image: 'busybox', ...body }), 400, /NUL/);
    }
    expect(failures).toEqual([]);
  });
  test('null for any optional field means "not set", as in Go', async () => {
    const { app } = harness();
    const res = await create(app, { Image: 'busybox', Cmd: ['echo'], Env: null, Labels: null, Entrypoint: null, Tty: null, HostConfig: null, WorkingDir: null });
    expect(res.status).toBe(201);
  });
  test('Cmd as one string is accepted (strslice), as dockerd does', async () => {
    const { app } = harness();
    expect((await create(app, { Image: 'busybox', Cmd: 'echo' })).status).toBe(201);
  });
  test('unknown fields and unknown query parameters are ignored', async () => {
    const { app } = harness();
    expect((await create(app, { Image: 'busybox', Cmd: ['echo'], Whatever: { deep: [1] } }, '?platform=linux&foo=bar&foo=baz')).status).toBe(201);
  });
});

describe('POST /containers/create?name=: a name outside [a-zA-Z0-9][a-zA-Z0-9_.-]+ is 400 with dockerd\'s words', () => {
  for (const name of ['a', '/', '-x', 'a/b', 'a%2Fb', '..', 'caf%C3%A9', 'a%00b', 'a%0D%0Ab', '%ZZ']) {
    test(name, async () => {
      const { app, failures } = harness();
      expectEngineError(await create(app, { Image: 'busybox', Cmd: ['echo'] }, `?name=${name}`), 400, /Invalid container name/);
      expect(failures).toEqual([]);
    });
  }
  test('a repeated name uses the first value, as Go\'s url.Values.Get', async () => {
    const { app } = harness();
    expect((await create(app, { Image: 'busybox', Cmd: ['echo'] }, '?name=first&name=second')).status).toBe(201);
    const res = await request(app).get('/containers/first/json');
    expect(res.status).toBe(200);
  });
});

describe('container ids from the path: odd bytes are 404 "No such container", a broken escape is 400', () => {
  for (const id of ['a%2Fb', 'a%00b', '%E2%82%AC', 'x%0D%0Ay', '%20', 'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff']) {
    test(`GET /containers/${id}/json is 404 JSON`, async () => {
      const { app, failures } = harness();
      expectEngineError(await request(app).get(`/v1.41/containers/${id}/json`), 404, /^No such container: /);
      expect(failures).toEqual([]);
    });
  }
  for (const path of ['/containers/%ZZ/json', '/v1.41/containers/%E0%A4%A/start', '/containers/%/logs?stdout=1', '/containers/%C0%AF']) {
    test(`${path}: an invalid percent-escape is 400, not 500`, async () => {
      const { app, failures } = harness();
      const method = path.endsWith('start') ? 'post' : path.endsWith('%AF') ? 'delete' : 'get';
      expectEngineError(await request(app)[method](path), 400);
      expect(failures).toEqual([]);
    });
  }
  test('a ".." segment matches no route: 404 page not found', async () => {
    const { app } = harness();
    expectEngineError(await request(app).get('/containers/../version'), 404, 'page not found');
    expectEngineError(await request(app).get('/v1.41/containers/%2e%2e/json'), 404);
  });
  test('a wrong method on a known path is 404 page not found, as dockerd', async () => {
    const { app } = harness();
    expectEngineError(await request(app).put('/v1.41/containers/json'), 404, 'page not found');
  });
});

describe('GET /containers/{id}/logs: bad tail is "all", bad since/until is 400, no stream is 400', () => {
  test('no stream selected is 400 "you must choose at least one stream"', async () => {
    const { app } = harness();
    const id = await createdId(app);
    expectEngineError(await request(app).get(`/containers/${id}/logs?stdout=0&stderr=false`), 400, /at least one stream/);
  });
  test('tail that is not an integer (abc, -1, 1e3, 99999999999999999999) means all lines', async () => {
    const { app } = harness();
    const id = await createdId(app);
    for (const tail of ['abc', '-1', '1e3', '99999999999999999999', '', '%00']) {
      const res = await request(app).get(`/containers/${id}/logs?stdout=1&tail=${tail}`);
      expect(res.status).toBe(200);
    }
  });
  test('since/until that are not times are 400', async () => {
    const { app, failures } = harness();
    const id = await createdId(app);
    for (const query of ['since=yesterday', 'until=abc', 'since=1.2.3', 'since=%00']) {
      expectEngineError(await request(app).get(`/v1.41/containers/${id}/logs?stdout=1&${query}`), 400, /failed to parse value as time/);
    }
    expect(failures).toEqual([]);
  });
  test('until is ignored below API 1.35, as dockerd', async () => {
    const { app } = harness();
    const id = await createdId(app);
    expect((await request(app).get(`/v1.34/containers/${id}/logs?stdout=1&until=garbage`)).status).toBe(200);
  });
  test('repeated and bracketed parameters are not a crash', async () => {
    const { app } = harness();
    const id = await createdId(app);
    expect((await request(app).get(`/containers/${id}/logs?stdout=1&stdout=0&tail[x]=1&since=`)).status).toBe(200);
  });
});

describe('POST /containers/{id}/wait: an unknown condition is ignored before 1.42 and 400 from 1.42', () => {
  test('at 1.30 condition=bogus waits as not-running', async () => {
    const { app } = harness();
    const id = await createdId(app);
    const res = await request(app).post(`/v1.30/containers/${id}/wait?condition=bogus`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ StatusCode: 0, Error: null });
  });
  test('at 1.42 condition=bogus (or CR LF, or unicode) is 400 invalid condition', async () => {
    const { app } = harness();
    const id = await createdId(app);
    for (const condition of ['bogus', 'a%0D%0Ab', '%E2%82%AC', 'NOT-RUNNING']) {
      expectEngineError(await request(app).post(`/v1.42/containers/${id}/wait?condition=${condition}`), 400, /^invalid condition: /);
    }
  });
  test('waiting on an unknown container is 404 before any header is sent', async () => {
    const { app } = harness();
    expectEngineError(await request(app).post('/v1.42/containers/nope/wait'), 404, 'No such container: nope');
  });
});

describe('version prefixes: dockerd\'s lenient compare, 400 out of range, 404 when not digits and dots', () => {
  const cases: [string, number, RegExp | undefined][] = [
    ['/v1.28.0/_ping', 200, undefined],
    ['/v01.28/_ping', 200, undefined],
    ['/v1.280/version', 400, /client version 1\.280 is too new/],
    ['/v9999999999999999999.1/version', 400, /client version 9999999999999999999\.1 is too new/],
    ['/v1.99999999999999999999/version', 400, /is too new/],
    ['/v2/version', 400, /client version 2 is too new/],
    ['/v1.41a/version', 404, /page not found/],
    ['/v/version', 404, /page not found/],
    ['/v-1.28/version', 404, /page not found/],
    ['/v1.28%2F/version', 404, /page not found/],
  ];
  for (const [path, status, message] of cases) {
    test(`${path} is ${status}`, async () => {
      const { app, failures } = harness();
      const res = await request(app).get(path);
      if (status === 200) expect(res.status).toBe(200);
      else expectEngineError(res, status, message);
      expect(failures).toEqual([]);
    });
  }
  test('/v.../version and /v0.0 are "too old", in plain text as dockerd answers below 1.24', async () => {
    const { app } = harness();
    for (const path of ['/v.../version', '/v0.0/version']) {
      const res = await request(app).get(path);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.text).toMatch(/is too old/);
    }
  });
});

describe('GET /events: bad filters or times are 400 before the stream starts', () => {
  const queries: [string, RegExp][] = [
    ['filters=%7B', /invalid filters/],
    ['filters=%5B1%5D', /invalid filters/],
    ['filters=null', /invalid filters/],
    ['filters=%22x%22', /invalid filters/],
    ['filters=%7B%22bogus%22%3A%7B%7D%7D', /Invalid filter 'bogus'/],
    ['filters=%7B%22container%22%3A5%7D', /invalid filters/],
    ['filters=%7B%22__proto__%22%3A%7B%7D%7D', /Invalid filter '__proto__'/],
    ['since=soon', /failed to parse value as time/],
    ['until=later', /failed to parse value as time/],
  ];
  for (const [query, message] of queries) {
    test(query, async () => {
      const { app, failures } = harness();
      expectEngineError(await request(app).get(`/v1.41/events?${query}`), 400, message);
      expect(failures).toEqual([]);
    });
  }
  test('GET /containers/json with bad filters or limit is 400', async () => {
    const { app } = harness();
    expectEngineError(await request(app).get('/containers/json?filters=%7Bx'), 400, /invalid filters/);
    expectEngineError(await request(app).get('/containers/json?limit=ten'), 400, /invalid value for limit/);
  });
});

describe('start and remove: misuse is 304/400/409 with dockerd\'s words', () => {
  test('start with a body at API >= 1.24 is 400', async () => {
    const { app } = harness();
    const id = await createdId(app);
    expectEngineError(await request(app).post(`/v1.41/containers/${id}/start`).set('Content-Type', JSON_TYPE).send('{"Binds":["/:/host"]}'), 400, /non-empty request body/);
  });
  test('DELETE on a running container is 409 without force and 204 with force=1', async () => {
    const h = harness();
    const id = await createdId(h.app, { Image: 'slow:1', Cmd: ['x'] });
    expect((await request(h.app).post(`/containers/${id}/start`)).status).toBe(204);
    expectEngineError(await request(h.app).delete(`/containers/${id}?force=false`), 409, /You cannot remove a running container/);
    expect((await request(h.app).delete(`/containers/${id}?force=1&v=%00`)).status).toBe(204);
    expectEngineError(await request(h.app).get(`/containers/${id}/json`), 404);
    h.release();
  });
  test('DELETE of an unknown or already removed container is 404', async () => {
    const { app } = harness();
    const id = await createdId(app);
    expect((await request(app).delete(`/containers/${id}`)).status).toBe(204);
    expectEngineError(await request(app).delete(`/containers/${id}`), 404, /No such container/);
  });
  test('an ambiguous id prefix is 400', async () => {
    const { app } = harness();
    const ids = await Promise.all(Array.from({ length: 40 }, () => createdId(app)));
    const first = ids[0]!.charAt(0);
    const shared = ids.filter((id) => id.startsWith(first));
    if (shared.length > 1) expectEngineError(await request(app).get(`/containers/${first}/json`), 400, /multiple IDs/);
    else expect((await request(app).get(`/containers/${first}/json`)).status).toBe(200);
  });
});

describe('GET /events?until= far in the future keeps the stream open (a timer delay over 2^31-1 ms must not fire at once)', () => {
  test('until = now + 30 days: no end within 300 ms', async () => {
    const { app } = harness();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    try {
      const { port } = server.address() as { port: number };
      const until = Math.floor(Date.now() / 1000) + 30 * 86400;
      const abort = new AbortController();
      const res = await fetch(`http://127.0.0.1:${port}/v1.41/events?until=${until}`, { signal: abort.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const ended = await Promise.race([reader.read().then((r) => r.done), new Promise((r) => setTimeout(() => r('open'), 300))]);
      expect(ended).toBe('open');
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      abort.abort();
    } finally {
      process.off('warning', onWarning);
      server.closeAllConnections();
      server.close();
    }
  });
});
