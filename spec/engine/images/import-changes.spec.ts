import { describe, expect, test } from '@jest/globals';
import { applyChanges } from '../../../lib/engine/images/store/import-changes.js';
import { EngineError } from '../../../lib/engine-api/engine-error.js';

describe('docker import --change: the ten instructions dockerd applies, in its forms', () => {
  test('CMD and ENTRYPOINT take the exec form as given and run the shell form under /bin/sh -c', () => {
    expect(applyChanges({}, ['CMD ["cat", "/f"]', 'ENTRYPOINT echo x'])).toEqual({ Cmd: ['cat', '/f'], Entrypoint: ['/bin/sh', '-c', 'echo x'] });
  });
  test('ENV and LABEL take key=value pairs (quotes kept whole) and the legacy "key value" form; a later ENV replaces the name', () => {
    expect(applyChanges({}, ['ENV A=1 B="two words"', 'ENV A 3', 'LABEL a=b "c d"=e'])).toEqual({ Env: ['A=3', 'B=two words'], Labels: { a: 'b', 'c d': 'e' } });
  });
  test('EXPOSE defaults to tcp and expands ranges; VOLUME takes a JSON list or words; WORKDIR resolves against the last one', () => {
    expect(applyChanges({}, ['EXPOSE 80 53/udp 8000-8001', 'VOLUME ["/a"]', 'VOLUME /b /c', 'WORKDIR /srv', 'WORKDIR app', 'USER nobody'])).toEqual({
      ExposedPorts: { '80/tcp': {}, '53/udp': {}, '8000/tcp': {}, '8001/tcp': {} },
      Volumes: { '/a': {}, '/b': {}, '/c': {} },
      WorkingDir: '/srv/app',
      User: 'nobody',
    });
  });
  test('HEALTHCHECK takes NONE or its options before CMD (durations in nanoseconds); ONBUILD keeps its trigger', () => {
    expect(applyChanges({}, ['HEALTHCHECK --interval=5s --retries=3 CMD true'])).toEqual({ Healthcheck: { Interval: 5e9, Retries: 3, Test: ['CMD-SHELL', 'true'] } });
    expect(applyChanges({}, ['HEALTHCHECK NONE', 'ONBUILD RUN make'])).toEqual({ Healthcheck: { Test: ['NONE'] }, OnBuild: ['RUN make'] });
  });
  test('any other instruction is a 400 in dockerd\'s words', () => {
    for (const [change, word] of [['RUN echo x', 'run'], ['STOPSIGNAL 9', 'stopsignal'], ['FROM scratch', 'from'], ['COPY a b', 'copy']]) {
      let thrown: unknown;
      try {
        applyChanges({}, [change as string]);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EngineError);
      expect({ status: (thrown as EngineError).status, message: (thrown as EngineError).message }).toEqual({ status: 400, message: `${word} is not a valid change command` });
    }
  });
});
