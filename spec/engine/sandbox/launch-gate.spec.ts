import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LaunchGate } from '../../../lib/engine/runtime/sandbox/network/launch-gate.js';

const spareNames = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('.spare-'));

describe('a start\'s gate FIFOs come from spares one mkfifo makes ahead in the run directory, renamed into place', () => {
  test('16 gates made at once share one batch of 32 spares; each pair is two FIFOs of mode 0600 at <base>.info and <base>.block', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-gate-'));
    writeFileSync(join(dir, '.spare-left-by-a-previous-server'), '');
    const gates = await Promise.all(Array.from({ length: 16 }, (_, i) => LaunchGate.create(join(dir, `c${i}`))));
    expect(spareNames(dir)).toHaveLength(0);
    for (let i = 0; i < 16; i++) {
      for (const end of ['info', 'block']) {
        const st = statSync(join(dir, `c${i}.${end}`));
        expect([st.isFIFO(), st.mode & 0o777]).toEqual([true, 0o600]);
      }
    }
    for (const gate of gates) gate.remove();
    expect(readdirSync(dir)).toEqual([]);
    // The next start takes a new batch; the one after that a spare of it.
    (await LaunchGate.create(join(dir, 'd1'))).remove();
    expect(spareNames(dir)).toHaveLength(30);
    rmSync(dir, { recursive: true, force: true });
  });
  test('spares removed behind its back (the run directory emptied) are made anew', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-gate-'));
    (await LaunchGate.create(join(dir, 'a'))).remove();
    for (const name of spareNames(dir)) rmSync(join(dir, name));
    const gate = await LaunchGate.create(join(dir, 'b'));
    expect(statSync(join(dir, 'b.info')).isFIFO()).toBe(true);
    gate.remove();
    rmSync(dir, { recursive: true, force: true });
  });
});
