import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client } from 'ldapts';
import type { ResolvedLdapOptions } from './ldap-options.js';

/** TLS options for `ldaps://` and StartTLS; the host name is checked against the certificate. */
function tlsOptions(options: ResolvedLdapOptions): ConnectionOptions {
  const host = options.url.hostname.replace(/^\[|\]$/g, '');
  return {
    ...(options.ca ? { ca: options.ca } : {}),
    host,
    // SNI takes names only (RFC 6066 §3); an address is still checked against the certificate's IP SANs.
    ...(isIP(host) === 0 ? { servername: host } : {}),
    minVersion: 'TLSv1.2',
  };
}

/** Opens a connection (TLS per the options) and, when given, binds; rejects on any failure. */
export async function openLdapClient(options: ResolvedLdapOptions, bind?: { dn: string; password: string }): Promise<Client> {
  const client = new Client({
    url: `${options.url.protocol}//${options.url.host}`,
    timeout: options.timeoutMs,
    connectTimeout: options.connectTimeoutMs,
    ...(options.secure ? { tlsOptions: tlsOptions(options) } : {}),
  });
  try {
    if (options.startTLS) await client.startTLS(tlsOptions(options));
    if (bind) await client.bind(bind.dn, bind.password);
    return client;
  } catch (err) {
    closeQuietly(client);
    throw err;
  }
}

/** Ends a connection without waiting or failing (it may be dead already). */
export function closeQuietly(client: Client): void {
  client.unbind().catch(() => {});
}

/**
 * The service connection: opened (and bound as `bindDN`) on first use and kept for the searches
 * of later logins, since a TCP + TLS handshake and a bind per login would double the directory's
 * work. ldapts multiplexes concurrent operations on it by message id. It is dropped after an
 * error that is not an LDAP result (a closed socket, a timeout) and whenever it lost its bind or
 * connection, so ldapts' silent reconnect — unbound, and without StartTLS — is never relied on.
 */
export class ServiceConnection {
  readonly #options: ResolvedLdapOptions;
  #client: Promise<Client> | undefined;

  constructor(options: ResolvedLdapOptions) {
    this.#options = options;
  }

  /** Runs `operation` on the service connection; `isResultError` tells which errors keep it. */
  async run<T>(operation: (client: Client) => Promise<T>, isResultError: (err: unknown) => boolean): Promise<T> {
    const client = await this.#current();
    try {
      return await operation(client);
    } catch (err) {
      if (!isResultError(err)) this.drop(client);
      throw err;
    }
  }

  /** Drops the connection (after a timeout, or when the client's deadline passed). */
  drop(client?: Client): void {
    const current = this.#client;
    if (!current) return;
    if (client) {
      void current.then((open) => {
        if (open === client && this.#client === current) this.#client = undefined;
      }, () => {});
      closeQuietly(client);
      return;
    }
    this.#client = undefined;
    current.then(closeQuietly, () => {});
  }

  async #current(): Promise<Client> {
    const existing = this.#client;
    if (existing) {
      const client = await existing.catch(() => undefined);
      if (client && client.isConnected && (!this.#options.bind || client.isBound)) return client;
      if (this.#client === existing) this.#client = undefined;
      if (client) closeQuietly(client);
    }
    this.#client ??= openLdapClient(this.#options, this.#options.bind);
    const opening = this.#client;
    try {
      return await opening;
    } catch (err) {
      if (this.#client === opening) this.#client = undefined;
      throw err;
    }
  }
}
