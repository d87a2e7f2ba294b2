import { describe, expect, test } from '@jest/globals';
import { runStages, type Stage } from '../../../lib/engine/runtime/sandbox/launch/stages.js';
import { START_STAGES } from '../../../lib/engine/runtime/sandbox/launch/start-stages.js';

/** A stage that logs its run and undo into `log`, failing its run or its undo when asked. */
function stage(name: string, log: string[], fail: { run?: Error; undo?: Error; noUndo?: boolean } = {}): Stage<unknown> {
  return {
    name,
    run: async () => {
      log.push(`run ${name}`);
      if (fail.run) throw fail.run;
    },
    ...(fail.noUndo ? {} : {
      undo: async () => {
        log.push(`undo ${name}`);
        if (fail.undo) throw fail.undo;
      },
    }),
  };
}

describe('runStages: the stages run in order', () => {
  test('every stage runs once, in the order given, and nothing is undone when all succeed', async () => {
    const log: string[] = [];
    await runStages([stage('a', log), stage('b', log), stage('c', log)], {});
    expect(log).toEqual(['run a', 'run b', 'run c']);
  });

  test('each stage sees what the earlier ones left on the context', async () => {
    const ctx: { seen: string[] } = { seen: [] };
    const add = (name: string): Stage<typeof ctx> => ({ name, run: (c) => { c.seen.push(name); } });
    await runStages([add('rootfs'), add('tmpfs'), add('launch')], ctx);
    expect(ctx.seen).toEqual(['rootfs', 'tmpfs', 'launch']);
  });
});

describe('runStages: a failure undoes the completed stages in reverse, then rethrows', () => {
  test('only the stages that completed are undone, last first; the failed stage and the later ones are not', async () => {
    const log: string[] = [];
    const boom = new Error('boom');
    await expect(runStages([stage('a', log), stage('b', log), stage('c', log, { run: boom }), stage('d', log)], {})).rejects.toBe(boom);
    expect(log).toEqual(['run a', 'run b', 'run c', 'undo b', 'undo a']);
  });

  test('a stage without an undo is passed over', async () => {
    const log: string[] = [];
    await expect(runStages([stage('a', log), stage('b', log, { noUndo: true }), stage('c', log, { run: new Error('x') })], {})).rejects.toThrow('x');
    expect(log).toEqual(['run a', 'run b', 'run c', 'undo a']);
  });

  test('a failing first stage undoes nothing', async () => {
    const log: string[] = [];
    await expect(runStages([stage('a', log, { run: new Error('first') }), stage('b', log)], {})).rejects.toThrow('first');
    expect(log).toEqual(['run a']);
  });

  test('a synchronous throw is handled as a rejection', async () => {
    const log: string[] = [];
    const sync: Stage<unknown> = { name: 'sync', run: () => { throw new TypeError('sync'); } };
    await expect(runStages([stage('a', log), sync], {})).rejects.toThrow(TypeError);
    expect(log).toEqual(['run a', 'undo a']);
  });
});

describe('runStages: an undo that fails does not mask the original error', () => {
  test('the original error is rethrown, the other undos still run, and the undo failure goes to onUndoError', async () => {
    const log: string[] = [];
    const original = new Error('original');
    const undoFailure = new Error('undo failed');
    const reported: [string, unknown][] = [];
    await expect(runStages(
      [stage('a', log), stage('b', log, { undo: undoFailure }), stage('c', log, { run: original })],
      {},
      (name, error) => reported.push([name, error]),
    )).rejects.toBe(original);
    expect(log).toEqual(['run a', 'run b', 'run c', 'undo b', 'undo a']);
    expect(reported).toEqual([['b', undoFailure]]);
  });

  test('without onUndoError, an undo failure is ignored and the original error still wins', async () => {
    const log: string[] = [];
    const original = new Error('original');
    await expect(runStages([stage('a', log, { undo: new Error('undo') }), stage('b', log, { run: original })], {})).rejects.toBe(original);
    expect(log).toEqual(['run a', 'run b', 'undo a']);
  });
});

describe("the sandbox's start stages", () => {
  test('run in the documented order, and only the stages that make something to take back have an undo', () => {
    expect(START_STAGES.map((s) => s.name)).toEqual([
      'network target', 'rootfs', 'etc', 'user', 'tmpfs', 'userns', 'seccomp', 'network', 'cgroups', 'bwrap', 'launch', 'connect',
    ]);
    expect(START_STAGES.filter((s) => s.undo).map((s) => s.name)).toEqual(['tmpfs', 'network', 'cgroups', 'launch']);
  });
});
