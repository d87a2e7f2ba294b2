import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The guard of issue 32's rule: the create body is decoded once, on the route side, into a
 * ContainerSpec (lib/engine-api/container-spec.ts), and the policies and runtimes read that. Under
 * lib/engine/runtime only the files listed here touch the create body's JSON (`spec.raw`, a
 * `HostConfig` object, a `ContainerCreateBody`), each for its reason. Strings and comments
 * (error messages naming `HostConfig.Binds`…) are not reads and are left out of the scan. A
 * listed file that no longer needs it is removed from the list (the list must match exactly).
 */
const RUNTIME = join(process.cwd(), 'lib', 'engine', 'runtime');

const ALLOWED: Record<string, string> = {
  'docker/docker-runtime.ts': "the Docker runtime's writer: it forwards the body to dockerd",
  'docker/docker-container-ops.ts': "the Docker runtime's exec writer: it forwards the decoded exec body (ExecSpec.raw) to dockerd",
  'local/container-views.ts': "inspect's echo of the kept body, and keptBody, which writes what create settled over the body as sent",
  'local/container-records.ts': "the stored record holds the kept body; a restore decodes it again",
  'local/local-container.ts': 'the type of the kept body (LocalContainer.body)',
  'local/new-container.ts': "a new container's kept body is its spec's raw (written by keptBody)",
  'local/local-container-ops.ts': "keeps the updated spec's body as the container's record (docker update)",
};

/** Reads of the create body's JSON: `.raw`, a `HostConfig` property, the body's type. */
const READS = /\.raw\b|\bHostConfig\b|\bContainerCreateBody\b/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The source without its comments and string literals (template literals' text too, their `${…}` kept). */
function code(source: string): string {
  const token = /\/\*[\s\S]*?\*\/|\/\/.*$|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|\$\{[^}]*\}|[^`\\])*`/gm;
  return source.replace(token, (t) => (t.startsWith('`') ? (t.match(/\$\{[^}]*\}/g) ?? []).join(' ') : t.startsWith('/') ? '' : "''"));
}

const reading = (dir: string): string[] => files(dir).filter((f) => READS.test(code(readFileSync(f, 'utf8')))).map((f) => relative(dir, f)).sort();

describe('no file under lib/engine/runtime reads the raw create body, the listed ones aside', () => {
  test('the files that touch the body are exactly the listed ones', () => {
    expect(reading(RUNTIME)).toEqual(Object.keys(ALLOWED).sort());
  });
});

/**
 * The policies are asked with the typed spec (`PolicyRequest.spec`), decoded once before the
 * checkpoint by the create route's chain; none reads the body's JSON, so what a policy judges
 * is what the runtime is handed.
 */
const POLICY = join(process.cwd(), 'lib', 'engine', 'policy');

describe('no policy reads the raw create body: policies read the typed spec', () => {
  test('no file under lib/engine/policy touches the create body\'s JSON', () => {
    expect(reading(POLICY)).toEqual([]);
  });
});
