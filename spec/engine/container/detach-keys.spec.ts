import { describe, test, expect } from '@jest/globals';
import { connect } from 'node:net';
import { detachKeyBytes, DetachWatcher } from '../../../lib/engine-api/detach-keys.js';
import { EngineError } from '../../../lib/engine-api/engine-error.js';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap, sandboxOnSocket } from '../sandbox-socket.js';

describe('detach keys: dockerd\'s key list and escape proxy', () => {
  test('ctrl- letters and @[\\]^_ are control bytes, one character is itself; anything else is a 400 in dockerd\'s words', () => {
    expect([...detachKeyBytes('ctrl-p,ctrl-q')]).toEqual([16, 17]);
    expect([...detachKeyBytes('ctrl-a,d,ctrl-@,ctrl-[')]).toEqual([1, 100, 0, 27]);
    for (const bad of ['ctrl-', 'ctrl-1', 'ab', '', 'ctrl-p,']) {
      let thrown: unknown;
      try {
        detachKeyBytes(bad);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EngineError);
      expect((thrown as EngineError).message).toBe(`Invalid detach keys (${bad}) provided`);
    }
  });
  test('input passes through; a partial sequence is held until it breaks (then it passes) or completes (then nothing of it passes)', () => {
    const w = new DetachWatcher(Buffer.from([16, 17]));
    expect(w.push(Buffer.from('ab\x10'))).toEqual({ data: Buffer.from('ab'), detached: false });
    expect(w.push(Buffer.from('c'))).toEqual({ data: Buffer.from('\x10c'), detached: false });
    expect(w.push(Buffer.from('x\x10'))).toEqual({ data: Buffer.from('x'), detached: false });
    expect(w.push(Buffer.from('\x11after'))).toEqual({ data: Buffer.alloc(0), detached: true });
  });
});

const { listening, call } = sandboxOnSocket('dockgate-detach');

/** An attach over `Upgrade: tcp`; types `input` after the 101 and answers what came back and whether the server closed the connection. */
async function attachAndType(id: string, query: string, input: string[]): Promise<{ out: string; closedByServer: boolean }> {
  const conn = connect((await listening)!.socket);
  let out = '';
  let closedByServer = false;
  conn.on('data', (d: Buffer) => (out += d.toString('latin1')));
  const ended = new Promise<void>((resolve) => conn.on('end', () => {
    closedByServer = true;
    resolve();
  }));
  conn.write(`POST /v1.41/containers/${id}/attach?stream=1&stdin=1&stdout=1&stderr=1${query} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n`);
  for (let i = 0; i < 50 && !out.includes('101 UPGRADED'); i++) await new Promise((r) => setTimeout(r, 50));
  for (const part of input) {
    conn.write(part);
    await new Promise((r) => setTimeout(r, 300));
  }
  await Promise.race([ended, new Promise((r) => setTimeout(r, 3000))]);
  conn.destroy();
  return { out, closedByServer };
}

describeWithPeers('attach detach keys (sandbox runtime): the server ends a TTY attach on them and the container keeps running', [bwrap], () => {
  test('ctrl-p ctrl-q by default; detachKeys=ctrl-a,d instead; the container\'s stdin stays open for the next attach', async () => {
    const created = await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['sh'], Tty: true, OpenStdin: true, StdinOnce: true });
    const id = created.json.Id as string;
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    const first = await attachAndType(id, '', ['echo ONE-$((2*3))\r', '\x10\x11']);
    expect(first.out).toContain('ONE-6');
    expect(first.closedByServer).toBe(true);
    expect((await call('GET', `/containers/${id}/json`)).json.State.Running).toBe(true);
    const second = await attachAndType(id, '&detachKeys=ctrl-a,d', ['echo TWO-$((3*3))\r', '\x10\x11echo STILL\r', '\x01d']);
    expect(second.out).toContain('TWO-9');
    expect(second.out).toContain('STILL');
    expect(second.closedByServer).toBe(true);
    expect((await call('GET', `/containers/${id}/json`)).json.State.Running).toBe(true);
    expect((await call('DELETE', `/containers/${id}?force=1`)).status).toBe(204);
  });
  test('an invalid detachKeys is refused before anything is attached', async () => {
    const created = await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['sh'], Tty: true, OpenStdin: true });
    const res = await call('POST', `/containers/${created.json.Id}/attach?stream=1&stdin=1&detachKeys=ctrl-1`);
    expect(res).toEqual({ status: 400, json: { message: 'Invalid detach keys (ctrl-1) provided' } });
  });
});
