// distribution/reference's grammar for repository names, shared by the scope parser (token and
// bearer sides) and the engine's image references:
//   name      := [domain '/'] path-component ['/' path-component]*
//   domain    := host [':' port]   (a DNS name, `localhost`, or a bracketed IPv6 address)
//   component := [a-z0-9]+ (separator [a-z0-9]+)*,  separator := [._] | __ | -+

const DOMAIN = /^(?:localhost|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d+)?|\[[0-9a-fA-F:]+\](?::\d+)?)$/;
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

/** The names Docker Hub goes by in references; `library/` is its namespace for official images. */
export const DOCKER_HUB_DOMAINS: readonly string[] = ['docker.io', 'index.docker.io', 'registry-1.docker.io'];

/** A repository name split into its optional registry domain and its path components. */
export interface RepositoryName {
  domain: string | undefined;
  components: string[];
}

/**
 * Splits a repository name the way distribution/reference does: the first segment is a domain
 * when there is more than one and it holds `.` or `:`, is `localhost`, or has upper-case
 * letters (which a path component never has). Nothing is validated here.
 *
 * @example
 * splitRepositoryName('localhost:5000/team/app') // { domain: 'localhost:5000', components: ['team', 'app'] }
 * splitRepositoryName('library/busybox')         // { domain: undefined, components: ['library', 'busybox'] }
 */
export function splitRepositoryName(name: string): RepositoryName {
  const parts = name.split('/');
  const first = parts[0] as string;
  const isDomain = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase());
  return isDomain ? { domain: first, components: parts.slice(1) } : { domain: undefined, components: parts };
}

/** True for a registry domain (`host[:port]`). */
export const isDomain = (value: string): boolean => DOMAIN.test(value);

/** True for one path component of a repository name (`library`, `my_app`, `a.b-c`). */
export const isPathComponent = (value: string): boolean => COMPONENT.test(value);
