/**
 * `docker load` of a pre-1.10 archive (`repositories`, `<id>/json`, `<id>/layer.tar`) over HTTP
 * into the sandbox runtime: what the untrusted v1 JSON may hold is bounded and checked before it
 * is stored. A load's error is dockerd's: a 200 whose JSON stream carries the message.
 */
import { afterAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { testApp } from '../helpers.js';
import { pack, type Header } from 'tar-stream';
import { tarOf } from './tar-fixture.js';

const bwrap: PeerCheck = { name: 'bwrap (bubblewrap)', available: () => spawnSync('bwrap', ['--version']).status === 0 };
const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-legacy-limits-'));
const runtime = bwrap.available() ? sandboxRuntime({ stateDir }) : undefined;
const app = runtime ? testApp(runtime, '1.24-1.41') : undefined;
afterAll(async () => {
  await runtime?.close?.();
  rmSync(stateDir, { recursive: true, force: true });
});

const v1Id = (n: number, salt: string) => (salt + n.toString(16)).padStart(64, '0');

/** A pre-1.10 archive of one chain of `depth` layers, the top tagged `tag`; `top` is the top layer's json. */
async function legacyChain(depth: number, tag: string, salt: string, top: Record<string, unknown> = {}): Promise<Buffer> {
  const members: { name: string; content: Buffer | string }[] = [];
  for (let i = 0; i < depth; i++) {
    const id = v1Id(i, salt);
    const layer = await tarOf([{ name: `f${i}`, content: `layer ${i}\n` }]);
    const json = { id, ...(i > 0 ? { parent: v1Id(i - 1, salt) } : {}), created: '2015-10-13T00:00:00Z', container_config: { Cmd: ['/bin/sh', '-c', `#(nop) ADD f${i}`] }, ...(i === depth - 1 ? top : {}) };
    members.push({ name: `${id}/json`, content: JSON.stringify(json) }, { name: `${id}/layer.tar`, content: layer });
  }
  const [repo, t] = tag.split(':') as [string, string];
  members.push({ name: 'repositories', content: JSON.stringify({ [repo]: { [t]: v1Id(depth - 1, salt) } }) });
  return bigTar(members);
}

/** A tar of many members, read while it is written (tarOf awaits each entry before reading, which stalls past the stream's buffer). */
async function bigTar(members: { name: string; content: Buffer | string }[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => archive.on('end', () => resolve()));
  for (const m of members) archive.entry({ name: m.name, mode: 0o644, mtime: new Date(0) } as Header, m.content);
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const load = (archive: Buffer) => request(app!).post('/v1.41/images/load?quiet=1').set('Content-Type', 'application/x-tar').send(archive);
const streamError = (message: string) => `${JSON.stringify({ errorDetail: { message }, error: message })}\n`;
const storedLayers = () => {
  const dir = join(stateDir, 'images', 'layers');
  return existsSync(dir) ? readdirSync(dir).length : 0;
};

describeWithPeers('a pre-1.10 archive whose parent chain is deeper than 125 layers (dockerd\'s maxLayerDepth) is refused before any layer is written', [bwrap], () => {
  test('a 126-layer chain: the load answers "max depth exceeded" in its stream; no image and no layer is stored', async () => {
    const images = (await request(app!).get('/v1.41/images/json?all=1')).body;
    const layers = storedLayers();
    const res = await load(await legacyChain(126, 'legacy/deep:126', 'a'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe(streamError(`invalid image archive: layer ${v1Id(125, 'a')}: max depth exceeded (a parent chain deeper than 125 layers)`));
    expect((await request(app!).get('/v1.41/images/json?all=1')).body).toEqual(images);
    expect(storedLayers()).toBe(layers);
  });
  test('a 125-layer chain loads: the tag names an image of 125 layers', async () => {
    const res = await load(await legacyChain(125, 'legacy/deep:125', 'b'));
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const inspect = await request(app!).get('/v1.41/images/legacy/deep:125/json');
    expect(inspect.status).toBe(200);
    expect(inspect.body.RootFS.Layers).toHaveLength(125);
    expect((await request(app!).get('/v1.41/images/legacy/deep:125/history')).body).toHaveLength(125);
  }, 60_000);
});

describeWithPeers('a v1 layer\'s config.Healthcheck is read as Go\'s HealthConfig: Test a list of strings, the durations and Retries integers, unknown keys dropped', [bwrap], () => {
  test('a well-formed Healthcheck is kept, its unknown keys and zero fields dropped', async () => {
    const healthcheck = { Test: ['CMD', 'true'], Interval: 30_000_000_000, Timeout: 0, StartPeriod: null, Retries: 3, Extra: { deep: ['x'] } };
    const res = await load(await legacyChain(1, 'legacy/health:ok', 'c', { config: { Healthcheck: healthcheck } }));
    expect(res.text).toBe('');
    const inspect = await request(app!).get('/v1.41/images/legacy/health:ok/json');
    expect(inspect.body.Config.Healthcheck).toEqual({ Test: ['CMD', 'true'], Interval: 30_000_000_000, Retries: 3 });
  });
  test.each([
    ['a string', 'CMD true', 'config.Healthcheck is not an object'],
    ['a list', [], 'config.Healthcheck is not an object'],
    ['a Test that is a string', { Test: 'CMD true' }, 'config.Healthcheck.Test is not a list of strings'],
    ['a Test with a number', { Test: ['CMD', 1] }, 'config.Healthcheck.Test is not a list of strings'],
    ['an Interval that is a string', { Interval: '30s' }, 'config.Healthcheck.Interval is not an integer'],
    ['a Timeout with a fraction', { Timeout: 1.5 }, 'config.Healthcheck.Timeout is not an integer'],
    ['a StartPeriod that is an object', { StartPeriod: {} }, 'config.Healthcheck.StartPeriod is not an integer'],
    ['Retries that is true', { Retries: true }, 'config.Healthcheck.Retries is not an integer'],
  ])('%s: refused, naming the field', async (what, healthcheck, message) => {
    const res = await load(await legacyChain(1, `legacy/health:bad${what.length}`, 'd', { config: { Healthcheck: healthcheck } }));
    expect(res.status).toBe(200);
    expect(res.text).toBe(streamError(`invalid image archive: ${message}`));
  });
});
