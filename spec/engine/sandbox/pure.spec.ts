import { describe, test, expect } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveUser } from '../../../lib/engine/runtime/sandbox/passwd.js';
import { applyImageConfig, mergeEnv } from '../../../lib/engine/runtime/local/image-config.js';
import { keptBody } from '../../../lib/engine/runtime/local/container-views.js';
import { containerSpecOf } from '../../../lib/engine-api/container-spec.js';
import { ContainerRecords, decodeLog, encodeLog, LOST_EXIT_CODE, restoredState, type ContainerRecord } from '../../../lib/engine/runtime/local/container-records.js';
import { EngineError } from '../../../lib/engine-api/engine-error.js';

const PASSWD = 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n# comment\nbroken line\n';
const GROUP = 'root:x:0:\nuser:x:1000:\nstaff:x:50:user\nnogroup:x:65534:\n';

describe('User is resolved against the image\'s /etc/passwd and /etc/group as runc does', () => {
  test('a name gives its uid, primary gid and home', () => {
    expect(resolveUser('nobody', PASSWD, GROUP)).toEqual({ uid: 65534, gid: 65534, home: '/nonexistent' });
  });
  test('a uid with an entry takes the entry\'s primary gid', () => {
    expect(resolveUser('1000', PASSWD, GROUP)).toEqual({ uid: 1000, gid: 1000, home: '/home/user' });
  });
  test('a uid without an entry runs with gid 0 and home /', () => {
    expect(resolveUser('4242', PASSWD, GROUP)).toEqual({ uid: 4242, gid: 0, home: '/' });
  });
  test('user:group looks the group up by name or gid; an unknown numeric gid is used as it is', () => {
    expect(resolveUser('user:staff', PASSWD, GROUP)).toMatchObject({ uid: 1000, gid: 50 });
    expect(resolveUser('nobody:0', PASSWD, GROUP)).toMatchObject({ uid: 65534, gid: 0 });
    expect(resolveUser('4242:777', PASSWD, GROUP)).toMatchObject({ uid: 4242, gid: 777 });
  });
  test('an unknown name is a 400 in dockerd\'s words', () => {
    expect(() => resolveUser('daemon', PASSWD, GROUP)).toThrow('unable to find user daemon: no matching entries in passwd file');
    expect(() => resolveUser('user:wheel', PASSWD, GROUP)).toThrow('unable to find group wheel: no matching entries in group file');
    try {
      resolveUser('daemon', PASSWD, GROUP);
    } catch (error) {
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).status).toBe(400);
    }
  });
  test('no passwd file: numeric ids still work, names do not', () => {
    expect(resolveUser('12:34', '', '')).toEqual({ uid: 12, gid: 34, home: '/' });
    expect(() => resolveUser('root', '', '')).toThrow(/unable to find user root/);
  });
});

describe('the image config is applied at create as dockerd merges it', () => {
  const image = { ref: 'x:1', id: 'sha256:' + 'a'.repeat(64), entrypoint: ['/entry'], cmd: ['default'], env: ['PATH=/bin', 'A=image'], workingDir: '/app', user: 'nobody', stopSignal: 'SIGQUIT', labels: { from: 'image', both: 'image' } };
  test('no Cmd, no Entrypoint: the image\'s entrypoint and cmd', () => {
    expect(applyImageConfig(containerSpecOf({ Image: 'x:1' }), image).argv).toEqual(['/entry', 'default']);
  });
  test('a Cmd replaces the image\'s cmd and keeps its entrypoint', () => {
    expect(applyImageConfig(containerSpecOf({ Image: 'x:1', Cmd: ['mine'] }), image).argv).toEqual(['/entry', 'mine']);
  });
  test('an Entrypoint drops the image\'s cmd; --entrypoint "" resets it', () => {
    expect(applyImageConfig(containerSpecOf({ Image: 'x:1', Entrypoint: ['/other'] }), image).argv).toEqual(['/other']);
    expect(applyImageConfig(containerSpecOf({ Image: 'x:1', Entrypoint: [''], Cmd: ['sh'] }), image).argv).toEqual(['sh']);
  });
  test('Env: the body\'s entries win; the image\'s others follow', () => {
    expect(applyImageConfig(containerSpecOf({ Image: 'x:1', Env: ['A=mine', 'B=2'] }), image).env).toEqual(['A=mine', 'B=2', 'PATH=/bin']);
    expect(mergeEnv([], ['X=1'])).toEqual(['X=1']);
  });
  test('User, WorkingDir, StopSignal come from the image unless the body sets them; Labels merge', () => {
    const sent = containerSpecOf({ Image: 'x:1', WorkingDir: '/mine', Labels: { both: 'body' } });
    const applied = applyImageConfig(sent, image);
    expect(applied.spec).toMatchObject({ user: 'nobody', workingDir: '/mine', stopSignal: 'SIGQUIT', cmd: ['default'], entrypoint: ['/entry'] });
    // The body kept for inspect shows the same, written over the body as sent.
    expect(keptBody(sent, applied.spec)).toMatchObject({ User: 'nobody', WorkingDir: '/mine', StopSignal: 'SIGQUIT', Cmd: ['default'], Entrypoint: ['/entry'], Labels: { from: 'image', both: 'body' } });
    expect(applied.labels).toEqual({ from: 'image', both: 'body' });
  });
  test('ExposedPorts and Volumes: the image\'s first, then the body\'s others; the kept body keeps what the body sent for its own keys', () => {
    const withPorts = { ...image, exposedPorts: ['80/tcp'], volumes: ['/data'] };
    const sent = containerSpecOf({ Image: 'x:1', ExposedPorts: { '9000/tcp': {} }, Volumes: { '/own': {} } });
    const applied = applyImageConfig(sent, withPorts);
    expect(applied.spec).toMatchObject({ exposedPorts: ['80/tcp', '9000/tcp'], volumes: ['/data', '/own'] });
    const kept = keptBody(sent, applied.spec);
    expect(Object.keys(kept.ExposedPorts as object)).toEqual(['80/tcp', '9000/tcp']);
    expect(kept.Volumes).toEqual({ '/data': {}, '/own': {} });
    // Nothing from the image: the body's fields stay as sent (null stays null).
    const plain = containerSpecOf({ Image: 'x:1', ExposedPorts: null, Volumes: null });
    expect(keptBody(plain, applyImageConfig(plain, image).spec)).toMatchObject({ ExposedPorts: null, Volumes: null });
  });
});

describe('container records survive a restart', () => {
  const record: ContainerRecord = {
    id: 'c'.repeat(64), name: 'n', created: new Date(0).toISOString(), image: { ref: 'busybox:latest', id: 'sha256:' + 'b'.repeat(64) },
    body: { Image: 'busybox' }, argv: ['true'], env: [], tty: false, openStdin: false, autoRemove: false, labels: {},
    status: 'exited', exitCode: 7, error: '', finishedAt: new Date(1000).toISOString(),
  };
  test('an exited container keeps its exit code', () => {
    expect(restoredState(record, new Date())).toMatchObject({ status: 'exited', exitCode: 7 });
  });
  test(`a container that was running is exited with ${LOST_EXIT_CODE}, as dockerd reports one whose daemon died without live-restore`, () => {
    const now = new Date(5000);
    expect(restoredState({ ...record, status: 'running' }, now)).toMatchObject({ status: 'exited', exitCode: 255, finishedAt: now.toISOString() });
  });
  test('output frames round-trip with stream and time', () => {
    const chunks = [{ stream: 1 as const, time: 1.5, data: Buffer.from('out\n') }, { stream: 2 as const, time: 2.25, data: Buffer.from('err\n') }];
    expect(decodeLog(encodeLog(chunks))).toEqual(chunks);
  });
  test('a truncated output file gives the whole frames before the cut', () => {
    const bytes = encodeLog([{ stream: 1, time: 1, data: Buffer.from('a') }, { stream: 1, time: 2, data: Buffer.from('bcdef') }]);
    expect(decodeLog(bytes.subarray(0, bytes.length - 2))).toHaveLength(1);
  });
  test('records written are read back; a removed one is gone and never rewritten', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-records-'));
    const records = new ContainerRecords(dir);
    const c = { ...record, created: new Date(0), finishedAt: new Date(1000), startedAt: undefined, image: { ...record.image }, pid: 0, log: { kept: () => [] }, exitWaiters: new Set(), removeWaiters: new Set() } as never;
    await records.save(c);
    expect(new ContainerRecords(dir).loadAll().map((r) => r.record.exitCode)).toEqual([7]);
    await records.remove(record.id);
    await records.save(c);
    expect(new ContainerRecords(dir).loadAll()).toEqual([]);
  });
});
