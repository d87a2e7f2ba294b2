/**
 * `GET /containers/{id}/attach/ws` with the `ws` client, through dockgate on the sandbox runtime
 * and on dockerd behind the Docker runtime, and against dockerd itself (the reference): raw
 * output in binary frames, messages as stdin, `logs`, detach keys on a TTY, 404 in dockerd's words.
 */
import { test, expect, afterAll } from '@jest/globals';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import WebSocket from 'ws';
import express from 'express';
import request from 'supertest';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { engineRouter, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

interface WsResult { opened: boolean; messages: { text: string; binary: boolean }[]; closeCode?: number; status?: number; body?: string }

/** Attaches over a websocket, sends `input` (one message each, spaced), and gathers what came back until the socket closes or `ms` pass. */
function attachWs(socket: string, path: string, input: (string | Buffer)[], ms = 2500): Promise<WsResult> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws+unix://${socket}:${path}`);
    const result: WsResult = { opened: false, messages: [] };
    const done = (): void => {
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      ws.terminate();
      done();
    }, ms);
    ws.on('open', () => {
      result.opened = true;
      input.forEach((part, i) => setTimeout(() => ws.readyState === ws.OPEN && ws.send(part), 300 * (i + 1)));
    });
    ws.on('message', (data, binary) => result.messages.push({ text: (data as Buffer).toString(), binary }));
    ws.on('close', (code) => {
      result.closeCode = code;
      done();
    });
    ws.on('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        result.status = res.statusCode;
        result.body = body;
        // ws leaves the refused request's socket to this listener: closed here, or it keeps Jest from exiting.
        req.destroy();
        done();
      });
    });
    ws.on('error', () => done());
  });
}

const targets: [string, (() => ContainerRuntime) | undefined, string, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), 'busybox', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
  ['dockerd itself (the reference)', undefined, 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of targets) {
  describeWithPeers(`attach over a websocket (API 1.41, ${label})`, peers, () => {
    const runtime = make?.();
    const listening = runtime ? listenOnSocket(runtime, '1.12-1.41') : undefined;
    const socket = async (): Promise<string> => (listening ? (await listening).socket : '/var/run/docker.sock');
    const ids: string[] = [];
    const call = async (method: string, path: string, body?: object) => {
      const res = await socketRequest(await socket(), method, `/v1.41${path}`, body);
      return { status: res.status, json: res.body.length > 0 ? JSON.parse(res.body.toString()) : undefined };
    };
    const started = async (body: object): Promise<string> => {
      const created = await call('POST', '/containers/create', { Image: image, ...body });
      expect(created.status).toBe(201);
      ids.push(created.json.Id);
      expect((await call('POST', `/containers/${created.json.Id}/start`)).status).toBe(204);
      await new Promise((r) => setTimeout(r, 300));
      return created.json.Id as string;
    };
    afterAll(async () => {
      for (const id of ids) await call('DELETE', `/containers/${id}?force=1`);
      await (await listening)?.close();
      await runtime?.close?.();
    });

    test('output comes raw in binary frames (logs first with logs=1), messages reach stdin, a client close answers 1000', async () => {
      const id = await started({ Cmd: ['sh', '-c', 'echo started; while read l; do echo "got $l"; done'], OpenStdin: true });
      const r = await attachWs(await socket(), `/v1.41/containers/${id}/attach/ws?stream=1&stdin=1&stdout=1&stderr=1&logs=1`, ['hello\n', Buffer.from('bin\n')]);
      expect(r.opened).toBe(true);
      expect(r.messages.map((m) => m.text).join('')).toBe('started\ngot hello\ngot bin\n');
      expect(r.messages.every((m) => m.binary)).toBe(true);
    });
    test('the socket closes with 1000 when the container\'s output ends', async () => {
      const id = await started({ Cmd: ['sh', '-c', 'read l; echo "bye $l"'], OpenStdin: true });
      const r = await attachWs(await socket(), `/v1.41/containers/${id}/attach/ws?stream=1&stdin=1&stdout=1&stderr=1`, ['now\n'], 5000);
      expect(r.messages.map((m) => m.text).join('')).toBe('bye now\n');
      expect(r.closeCode).toBe(1000);
    });
    test('on a TTY, ctrl-p ctrl-q ends the attach and the container keeps running', async () => {
      const id = await started({ Cmd: ['sh'], Tty: true, OpenStdin: true });
      const r = await attachWs(await socket(), `/v1.41/containers/${id}/attach/ws?stream=1&stdin=1&stdout=1&stderr=1`, ['echo WS-$((5*5))\r', '\x10\x11'], 5000);
      expect(r.messages.map((m) => m.text).join('')).toContain('WS-25');
      expect(r.closeCode).toBeDefined();
      expect((await call('GET', `/containers/${id}/json`)).json.State.Running).toBe(true);
    });
    test('an unknown container is a 404 before the upgrade, in dockerd\'s words', async () => {
      const r = await attachWs(await socket(), '/v1.41/containers/no-such-container-ws/attach/ws?stream=1&stdout=1', []);
      expect(r.opened).toBe(false);
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body ?? '{}')).toEqual({ message: 'No such container: no-such-container-ws' });
    });
  });
}

describeWithPeers('attach/ws without the server\'s upgrade event', [], () => {
  test('a plain GET is a 400 saying what it needs', async () => {
    const app = express().use(engineRouter(scriptedRuntime({ images: { 'busybox:latest': async () => ({}) } }), '1.24-1.41'));
    const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['true'] });
    const res = await request(app).get(`/v1.41/containers/${created.body.Id}/attach/ws?stream=1`);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('attach/ws needs a WebSocket upgrade');
  });
});
