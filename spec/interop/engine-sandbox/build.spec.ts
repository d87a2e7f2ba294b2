import { test, expect, afterAll, jest } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { needsRange, sandboxServer } from '../support/engine-user.js';
import { socketRequest } from '../../engine/helpers.js';

jest.setTimeout(120_000);
const here = dirname(fileURLToPath(import.meta.url));
const CLI = '/usr/local/bin/docker';
const DOCKERD = '/var/run/docker.sock';
const RANGE = '1.12-1.41';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };
const testcontainers: PeerCheck = { name: 'testcontainers 10 (npm devDependency)', available: () => existsSync(join(here, '../../../node_modules/testcontainers/package.json')) };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-build-cli-'));
/** The base image each engine has offline: the sandbox's busybox seed, dockerd's imported busybox. */
const BASE = { dockgate: 'busybox', dockerd: 'busybox:local' } as const;
const tag = (name: string) => `dg-build-${process.pid}-${name}`;

type Result = { code: number; stdout: string; stderr: string };
function run(file: string, args: string[], env: Record<string, string> = {}, cwd?: string): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { PATH: `/usr/local/bin:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/tmp', DOCKER_CONFIG: configDir, DOCKER_BUILDKIT: '0', ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Writes a context directory: path → content. */
function context(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-build-ctx-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

const MULTI_STAGE = `# syntax is BuildKit's; the classic builder reads it as a comment
ARG BASE=busybox
FROM \${BASE} AS builder
ARG GREETING=hello
WORKDIR /src
COPY app/ ./
RUN echo "$GREETING from \\
  the builder" > out.txt && ls > listing.txt
FROM \${BASE}
WORKDIR /app
COPY --from=builder /src/out.txt /src/listing.txt ./
COPY --chown=1000:1000 app/data.txt ./data.txt
USER 1000
CMD ["sh", "-c", "cat out.txt listing.txt; id -u; stat -c %u:%g data.txt; pwd"]
`;
const MULTI_FILES = {
  Dockerfile: MULTI_STAGE,
  '.dockerignore': 'app/secret*\n**/*.log\n!app/keep.log\n',
  'app/main.sh': 'echo main\n',
  'app/data.txt': 'data\n',
  'app/secret.txt': 'never copied\n',
  'app/debug.log': 'ignored\n',
  'app/keep.log': 'kept by the ! exception\n',
};

/** POSTs a raw body (a tar) over a Unix socket; resolves status and the whole answer. */
function postRaw(socket: string, path: string, body: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path, method: 'POST', headers: { 'Content-Type': 'application/x-tar', 'Content-Length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A build's `Step N/M : …` lines, what both engines print alike. */
const steps = (out: string) => out.split('\n').filter((l) => l.startsWith('Step '));

/** In the rootless pass (engine-user.ts): the multi-stage Dockerfile's COPY --chown and USER need ids other than root, mapped only with the subordinate range. */
const otherUsers = needsRange('COPY --chown and USER need a container user other than root, which needs the subordinate range mapped through newuidmap');

describeWithPeers('docker build (classic builder) and docker commit against the sandbox runtime, with dockerd as the reference', [program(CLI), bwrap, dockerd(), dockerImage(BASE.dockerd)], () => {
  const listening = hasBwrap ? sandboxServer({}, RANGE) : undefined;
  listening?.catch(() => undefined);
  const engines = async () => ({ dockgate: { DOCKER_HOST: `unix://${(await listening)!.socket}` }, dockerd: { DOCKER_HOST: `unix://${DOCKERD}` } });
  const made: string[] = [];
  afterAll(async () => {
    await run(CLI, ['rmi', '-f', ...made], { DOCKER_HOST: `unix://${DOCKERD}` });
    await (await listening)?.close();
  });

  otherUsers('a multi-stage Dockerfile with .dockerignore, ARG, COPY --from, COPY --chown, USER and WORKDIR builds and runs as on dockerd', async () => {
    const dir = context(MULTI_FILES);
    const out: Record<string, { build: Result; run: Result }> = {};
    for (const [name, env] of Object.entries(await engines())) {
      const ref = tag('multi');
      made.push(ref);
      const build = await run(CLI, ['build', '--build-arg', `BASE=${BASE[name as keyof typeof BASE]}`, '-t', ref, '.'], env, dir);
      out[name] = { build, run: await run(CLI, ['run', '--rm', ref], env) };
    }
    const { dockgate, dockerd: reference } = out as Record<'dockgate' | 'dockerd', { build: Result; run: Result }>;
    expect(dockgate.build).toMatchObject({ code: 0 });
    expect(reference.build).toMatchObject({ code: 0 });
    expect(steps(dockgate.build.stdout)).toEqual(steps(reference.build.stdout));
    expect(dockgate.build.stdout).toMatch(/Successfully built [0-9a-f]{12}\nSuccessfully tagged dg-build-\d+-multi:latest\n$/);
    expect(dockgate.run).toMatchObject({ code: 0, stdout: 'hello from   the builder\ndata.txt\nkeep.log\nlisting.txt\nmain.sh\nout.txt\n1000\n1000:1000\n/app\n' });
    expect(dockgate.run.stdout).toBe(reference.run.stdout);
  });

  otherUsers('a RUN that leaves a 0700 directory of uid 1000 builds, and a container holding one commits and diffs (rootless: read inside the user namespace, where the server\'s user may not)', async () => {
    const env = (await engines()).dockgate;
    const dir = context({ 'Dockerfile': 'FROM busybox\nRUN mkdir /d && echo secret > /d/f && chmod 600 /d/f && chown -R 1000:1000 /d && chmod 700 /d\n' });
    const ref = tag('private');
    made.push(ref);
    const build = await run(CLI, ['build', '-q', '-t', ref, '.'], env, dir);
    expect(build).toMatchObject({ code: 0 });
    expect(await run(CLI, ['run', '--rm', '-u', '1000', ref, 'sh', '-c', 'stat -c "%a %u:%g" /d /d/f; cat /d/f'], env)).toMatchObject({ code: 0, stdout: '700 1000:1000\n600 1000:1000\nsecret\n' });
    const id = (await run(CLI, ['run', '-d', 'busybox', 'sh', '-c', 'mkdir /p && echo mine > /p/f && chown -R 1000:1000 /p && chmod 700 /p && sleep 60'], env)).stdout.trim();
    try {
      let diff: Result = { code: 1, stdout: '', stderr: '' };
      for (let i = 0; i < 50 && !diff.stdout.includes('A /p/f'); i++) diff = await run(CLI, ['diff', id], env);
      expect(diff).toMatchObject({ code: 0, stdout: 'A /p\nA /p/f\n' });
      const committed = tag('private-commit');
      made.push(committed);
      expect(await run(CLI, ['commit', id, committed], env)).toMatchObject({ code: 0 });
      expect(await run(CLI, ['run', '--rm', '-u', '1000', committed, 'cat', '/p/f'], env)).toMatchObject({ code: 0, stdout: 'mine\n' });
    } finally {
      await run(CLI, ['rm', '-f', id], env);
    }
  });

  test('docker build -f ../Dockerfile . (the CLI adds it to the context under a generated name, the archive left unclosed) and -f a/nested/file build as on dockerd', async () => {
    const out: Record<string, string[]> = {};
    for (const [name, env] of Object.entries(await engines())) {
      const base = BASE[name as keyof typeof BASE];
      const dir = context({
        'Dockerfile': `FROM ${base}\nCOPY f /f\nRUN echo outside >> /f\nCMD ["cat", "/f"]\n`,
        'ctx/f': 'in the context\n',
        'ctx/hello/world/custom.dockerfile': `FROM ${base}\nCOPY . /src\nWORKDIR /src\nCMD ["ls", "-a"]\n`,
      });
      out[name] = [];
      for (const [file, ref] of [['../Dockerfile', tag('outside')], ['hello/world/custom.dockerfile', tag('nested')]] as const) {
        made.push(ref);
        const build = await run(CLI, ['build', '-q', '-f', file, '-t', ref, '.'], env, join(dir, 'ctx'));
        expect({ name, file, code: build.code, stderr: build.stderr.replace(/^DEPRECATED[\s\S]*?environment-variable\.\n\n?/, '') }).toEqual({ name, file, code: 0, stderr: '' });
        out[name]!.push((await run(CLI, ['run', '--rm', ref], env)).stdout);
      }
    }
    expect(out.dockgate).toEqual(['in the context\noutside\n', '.\n..\nf\nhello\n']);
    expect(out.dockgate).toEqual(out.dockerd);
  });

  otherUsers('an unchanged rebuild prints "Using cache" for every step dockerd does and gives the same image', async () => {
    const dir = context(MULTI_FILES);
    const { dockgate: env } = await engines();
    const first = await run(CLI, ['build', '-q', '-t', tag('cached'), '.'], env, dir);
    const again = await run(CLI, ['build', '-t', tag('cached'), '.'], env, dir);
    expect(again.code).toBe(0);
    // Every instruction after each FROM: 4 in the first stage, 5 in the second (dockerd's count too).
    expect(again.stdout.match(/ ---> Using cache\n/g)).toHaveLength(9);
    expect(first.stdout.trim()).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(again.stdout).toContain(`Successfully built ${first.stdout.trim().slice(7, 19)}\n`);
    const nocache = await run(CLI, ['build', '--no-cache', '-t', tag('cached'), '.'], env, dir);
    expect(nocache.stdout).not.toContain('Using cache');
  });

  test('a failing RUN answers dockerd\'s errorDetail with the exit code, tags nothing and leaves no container', async () => {
    const answers: Record<string, string> = {};
    for (const [name, env] of Object.entries(await engines())) {
      const socket = env.DOCKER_HOST.slice('unix://'.length);
      const before = JSON.parse((await socketRequest(socket, 'GET', '/v1.41/containers/json?all=1')).body.toString()) as unknown[];
      const dir = context({ Dockerfile: `FROM ${BASE[name as keyof typeof BASE]}\nRUN echo out && exit 3\n` });
      // --force-rm: both engines keep the failed container otherwise (build-stream.spec.ts).
      const r = await run(CLI, ['build', '--force-rm', '-t', tag('failing'), '.'], env, dir);
      // The CLI exits with the errorDetail's code: the RUN's own exit status.
      expect(r.code).toBe(3);
      answers[name] = r.stderr.replace(/^DEPRECATED[\s\S]*?environment-variable\.\n\n/, '');
      if (name === 'dockgate') {
        const after = JSON.parse((await socketRequest(socket, 'GET', '/v1.41/containers/json?all=1')).body.toString()) as unknown[];
        expect(after).toHaveLength(before.length);
        expect((await socketRequest(socket, 'GET', `/v1.41/images/${tag('failing')}/json`)).status).toBe(404);
      }
    }
    expect(answers.dockgate).toBe("The command '/bin/sh -c echo out && exit 3' returned a non-zero code: 3\n");
    expect(answers.dockgate).toBe(answers.dockerd);
  });

  test('the raw failure stream is dockerd\'s, byte for byte but for the container id (forcerm: its removal is printed)', async () => {
    const bodies: string[] = [];
    for (const [name, env] of Object.entries(await engines())) {
      const dir = context({ Dockerfile: `FROM ${BASE[name as keyof typeof BASE]}\nRUN echo out && false\n` });
      const tar = spawnSync('tar', ['-C', dir, '-c', 'Dockerfile']).stdout;
      const r = await postRaw(env.DOCKER_HOST.slice('unix://'.length), '/v1.41/build?rm=1&forcerm=1', tar);
      expect(r.status).toBe(200);
      bodies.push(r.body.replace(/[0-9a-f]{12}/g, 'ID').replace(BASE.dockerd, BASE.dockgate));
    }
    expect(bodies[0]).toContain('{"stream":"Removing intermediate container ID\\n"}\r\n{"errorDetail":{"code":1,"message":"The command \'/bin/sh -c echo out \\u0026\\u0026 false\' returned a non-zero code: 1"}');
    expect(bodies[0]).toBe(bodies[1]);
  });

  test('docker commit -c CMD -c ENV -m -a makes the image dockerd makes; a RUN change is refused in dockerd\'s words', async () => {
    const outputs: string[] = [];
    for (const [name, env] of Object.entries(await engines())) {
      const container = `dg-commit-${process.pid}-${name}`;
      expect((await run(CLI, ['run', '--name', container, BASE[name as keyof typeof BASE], 'sh', '-c', 'echo changed > /f; rm /bin/cat; mkdir -p /d/e'], env)).code).toBe(0);
      const ref = tag(`commit-${name}`);
      made.push(ref);
      const commit = await run(CLI, ['commit', '-c', 'CMD ["sh", "-c", "cat /f 2>&1; ls /bin/cat 2>&1; echo $A; ls -d /d/e"]', '-c', 'ENV A=1', '-m', 'msg', '-a', 'me', container, ref], env);
      expect(commit.stdout).toMatch(/^sha256:[0-9a-f]{64}\n$/);
      const ran = await run(CLI, ['run', '--rm', '--entrypoint', '', ref], env);
      const inspect = JSON.parse((await run(CLI, ['image', 'inspect', ref], env)).stdout)[0];
      outputs.push(JSON.stringify({ ran: ran.stdout, cmd: inspect.Config.Cmd, comment: inspect.Comment, author: inspect.Author, env: inspect.Config.Env.filter((e: string) => e.startsWith('A=')) }));
      const refused = await run(CLI, ['commit', '-c', 'RUN true', container], env);
      outputs.push(refused.stderr);
      await run(CLI, ['rm', container], env);
    }
    expect(JSON.parse(outputs[0]!)).toMatchObject({ comment: 'msg', author: 'me', env: ['A=1'] });
    expect(outputs[0]).toBe(outputs[2]);
    expect(outputs[1]).toBe('Error response from daemon: run is not a valid change command\n');
    expect(outputs[1]).toBe(outputs[3]);
  });
});

const SDK_DOCKERFILE = (base: string) => `FROM ${base}\nARG WHO=nobody\nRUN echo "built for $WHO" > /greeting\nCMD ["cat", "/greeting"]\n`;

describeWithPeers('docker-py 7 images.build (path= and fileobj=) against the sandbox runtime', [dockerPy, bwrap], () => {
  const listening = hasBwrap ? sandboxServer({}, RANGE) : undefined;
  listening?.catch(() => undefined);
  afterAll(async () => {
    await (await listening)?.close();
  });
  test('builds from a directory with buildargs and from a file object, runs both, and raises BuildError for a failing RUN', async () => {
    const dir = context({ Dockerfile: SDK_DOCKERFILE(BASE.dockgate), '.dockerignore': '*.tmp\n', 'x.tmp': 'ignored' });
    const r = await run('python3', [join(here, '../fixtures/docker-py-build.py'), dir, tag('py'), BASE.dockgate], { DOCKER_HOST: `unix://${(await listening)!.socket}` });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.ran).toBe('built for docker-py\n');
    expect(out.tags).toEqual([`${tag('py')}:latest`]);
    expect(out.streamed).toEqual([`Step 1/4 : FROM ${BASE.dockgate}`, '\n']);
    expect(out.fileobj).toBe('from-fileobj\n');
    expect(out.failed).toBe("The command '/bin/sh -c exit 3' returned a non-zero code: 3");
  });
});

describeWithPeers('testcontainers-node 10 GenericContainer.fromDockerfile against the sandbox runtime', [testcontainers, bwrap], () => {
  const listening = hasBwrap ? sandboxServer({}, RANGE) : undefined;
  listening?.catch(() => undefined);
  afterAll(async () => {
    await (await listening)?.close();
  });
  test('builds the directory with build args and starts the image; dockgate, not dockerd, built and ran it', async () => {
    const { socket } = (await listening)!;
    const dir = context({ Dockerfile: SDK_DOCKERFILE(BASE.dockgate) });
    const r = await run(process.execPath, [join(here, '../fixtures/testcontainers-build.mjs'), dir, tag('tc')], {
      DOCKER_HOST: `unix://${socket}`, TESTCONTAINERS_RYUK_DISABLED: 'true', TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!).id).toMatch(/^[0-9a-f]{64}$/);
    expect((await socketRequest(socket, 'GET', `/v1.41/images/${tag('tc')}/json`)).status).toBe(200);
    if (existsSync(DOCKERD)) expect((await socketRequest(DOCKERD, 'GET', `/v1.41/images/${tag('tc')}/json`)).status).toBe(404);
  });
});
