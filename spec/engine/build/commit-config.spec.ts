import { describe, test, expect } from '@jest/globals';
import { commitConfig } from '../../../lib/engine/build/commit-config.js';

const container = { Cmd: ['sh', '-c', 'x'], Env: ['PATH=/bin', 'A=0'], Labels: { l: '1' }, WorkingDir: '/w', Image: 'busybox', Hostname: 'abc' };

describe('docker commit\'s config: the request\'s (or the container\'s), changes applied, empty fields filled from the container (as dockerd 20.10 answers)', () => {
  test('no body, no changes: the container\'s image fields (not Hostname or Image)', () => {
    expect(commitConfig(container, undefined, [])).toEqual({ Cmd: ['sh', '-c', 'x'], Env: ['PATH=/bin', 'A=0'], Labels: { l: '1' }, WorkingDir: '/w', User: '' });
  });
  test('-c CMD and -c ENV: the new Cmd, the Env merged by name', () => {
    const out = commitConfig(container, undefined, ['CMD ["x"]', 'ENV A=1']);
    expect(out.Cmd).toEqual(['x']);
    expect(out.Env).toEqual(['PATH=/bin', 'A=1']);
  });
  test('a body config wins, its labels merged over the container\'s', () => {
    expect(commitConfig(container, { Cmd: ['y'], Labels: { a: 'b' } }, [])).toMatchObject({ Cmd: ['y'], Labels: { l: '1', a: 'b' } });
  });
  test('an ENTRYPOINT change drops the container\'s Cmd', () => {
    expect(commitConfig(container, undefined, ['ENTRYPOINT ["e"]'])).toMatchObject({ Entrypoint: ['e'] });
  });
  test.each([['RUN true', 'run'], ['FROM x', 'from'], ['COPY a b', 'copy'], ['SHELL ["sh"]', 'shell']])('%s is refused: "%s is not a valid change command"', (change, name) => {
    expect(() => commitConfig(container, undefined, [change])).toThrow(`${name} is not a valid change command`);
  });
  test('EXPOSE of a bad port is dockerd\'s "Invalid containerPort"', () => {
    expect(() => commitConfig(container, undefined, ['EXPOSE abc'])).toThrow('Invalid containerPort: abc');
  });
});
