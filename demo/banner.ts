import { existsSync } from 'node:fs';
import { registryTokenConfig } from 'dockgate';
import { accountLines, htpasswdAccounts } from './accounts.js';
import type { DemoOptions } from './options.js';

/** A Redis URL without its password. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}

function store(options: DemoOptions): string {
  if (options.redis) return `Redis (${redacted(options.redis)})`;
  if (options.redisCluster) return `Redis Cluster (${options.redisCluster.join(', ')})`;
  return 'in memory (use --redis URL or --redis-cluster HOST:PORT,… to share them between instances)';
}

/** What the demo prints on start: everything a newcomer copies, ready to paste. */
export function banner(options: DemoOptions, publicUrl: string, engineUrl: string, certPath: string, createdKey: boolean): string {
  const realm = `${publicUrl}/token`;
  const hostPort = publicUrl.replace(/^https?:\/\//, '');
  // The examples use an account the demo really serves: alice when the file still has her demo password.
  const accounts = htpasswdAccounts(options.users);
  const example = accounts.find((a) => a.password !== undefined) ?? { name: accounts[0]?.name ?? 'USER', password: undefined };
  const user = example.name;
  const password = example.password ?? 'PASSWORD';
  const creds = `${user}:${password}`;
  return `
dockgate demo is running
  token endpoint   ${realm}   (JWKS ${publicUrl}/jwks, revocation ${publicUrl}/revoke)
  registry routes  ${publicUrl}/v2/  and  ${publicUrl}/v2/<name>/tags/list   (bearer tokens)
  engine API       ${engineUrl}   (API ${options.apiRange.min}-${options.apiRange.max}, ${options.runtime} runtime)
                     the local administrator's: everything, for whoever may open the socket file (mode 0660)
                   ${publicUrl}/engine   (bearer tokens with scope engine:api:read / engine:api:write)
                     tenants: every signed-in account sees and acts on its own containers only, no host binds,
                     --privileged, host namespaces or extra capabilities, images under its own NAME/…
                     administrators: ${options.engineAdmins.length > 0 ? options.engineAdmins.join(', ') : 'none over TCP (--engine-admins NAME[,NAME…])'}
${options.runtime === 'process' ? '                     (the process runtime cannot contain anything: tenants may not create containers with it)\n' : ''}  signing key      ${certPath}${createdKey ? '   (development key, created now)' : ''}
  refresh tokens   ${store(options)}
  login throttle   ${options.redis || options.redisCluster ? 'counted in the same Redis, shared by every instance' : 'counted in this process'}

${accountLines(options, accounts)}

Get a token:
  curl -s -u ${creds} '${realm}?service=${options.service}&scope=repository:${user}/hello:pull'

Call a protected route with it:
  TOKEN=$(curl -s -u ${creds} '${realm}?service=${options.service}&scope=repository:${user}/hello:pull' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
  curl -s -H "Authorization: Bearer $TOKEN" ${publicUrl}/v2/${user}/hello/tags/list

Make a distribution registry trust these tokens (its config.yml):
${registryTokenConfig({ realm, service: options.service, issuer: options.issuer, rootCertBundle: certPath }).replace(/^/gm, '  ').trimEnd()}
  then: docker login <registry host:port> -u ${user} -p ${password}

Run a container through the engine API:
  export DOCKER_HOST=${engineUrl}
  docker run --rm busybox echo hello
${options.runtime === 'process' ? '  (WARNING: the process runtime is unconfined: containers run on this host as this user)\n' : ''}${options.runtime !== 'docker' && !existsSync('/bin/busybox') ? '  (note: /bin/busybox is missing, so busybox and alpine containers will fail to start:\n   install busybox-static, or use --runtime docker)\n' : ''}
Skopeo against the protected routes:
  skopeo list-tags --tls-verify=false --creds ${creds} docker://${hostPort}/${user}/hello

Ctrl-C stops the demo.
`;
}
