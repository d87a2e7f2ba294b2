import { connect as connectTcp, isIP, Socket } from 'node:net';
import { connect as connectTls, TLSSocket, type ConnectionOptions } from 'node:tls';
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

/** Thrown instead of sending a bind or search on a connection that is not encrypted as the options demand. */
export class LdapTlsStateError extends Error {
  constructor() {
    super('the LDAP connection is not in the TLS state the options demand (ldaps:// or StartTLS); nothing was sent on it');
    this.name = 'LdapTlsStateError';
  }
}

/**
 * The sockets of one client, made by us rather than by ldapts, so that the TLS state is known
 * and a downgrade is impossible: with StartTLS, ldapts may open exactly one plain connection
 * (which StartTLS then upgrades); when that connection drops, ldapts' silent reconnect would
 * be plain and carry the next search or bind in the clear, so a second plain connection is
 * refused before a byte is sent. With ldaps:// no plain connection is ever allowed (ldapts
 * reconnects through `secure`, TLS from the first byte).
 */
class Transport {
  #plainLeft: number;
  #tls: TLSSocket | undefined;

  constructor(options: ResolvedLdapOptions) {
    this.#plainLeft = options.secure ? 0 : options.startTLS ? 1 : Infinity;
  }

  /** ldapts' `createConnection` (plain `ldap://`). */
  readonly plain = (port: number, host: string): Socket => {
    if (this.#plainLeft > 0) {
      this.#plainLeft -= 1;
      return connectTcp(port, host);
    }
    const refused = new Socket();
    process.nextTick(() => refused.destroy(new LdapTlsStateError()));
    return refused;
  };

  /** ldapts' `createSecureConnection` (ldaps:// and the StartTLS upgrade). */
  readonly secure = (...args: unknown[]): TLSSocket => {
    const socket = (connectTls as (...a: unknown[]) => TLSSocket)(...args);
    this.#tls = socket;
    return socket;
  };

  /** Whether requests may be sent now: over an open, encrypted socket of ours. */
  get encrypted(): boolean {
    const socket = this.#tls;
    return socket !== undefined && socket.encrypted && !socket.destroyed && socket.writable;
  }
}

const transports = new WeakMap<Client, Transport>();

/**
 * Refuses (throws) unless the client's connection is in the TLS state the options demand:
 * after StartTLS, an open encrypted socket. With ldaps:// ldapts connects (and reconnects) only
 * through TLS, and a plain `ldap://` without StartTLS demands nothing. Called right before a
 * bind or a search.
 */
export function assertTlsState(options: ResolvedLdapOptions, client: Client): void {
  if (!options.startTLS) return;
  if (!transports.get(client)?.encrypted) throw new LdapTlsStateError();
}

/** Opens a connection (TLS per the options) and, when given, binds; rejects on any failure. */
export async function openLdapClient(options: ResolvedLdapOptions, bind?: { dn: string; password: string }): Promise<Client> {
  const transport = new Transport(options);
  const client = new Client({
    url: `${options.url.protocol}//${options.url.host}`,
    timeout: options.timeoutMs,
    connectTimeout: options.connectTimeoutMs,
    ...(options.secure ? { tlsOptions: tlsOptions(options) } : {}),
    createConnection: transport.plain as never,
    createSecureConnection: transport.secure as never,
  });
  transports.set(client, transport);
  try {
    if (options.startTLS) await client.startTLS(tlsOptions(options));
    if (bind) {
      assertTlsState(options, client);
      await client.bind(bind.dn, bind.password);
    }
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
 * Every operation first checks the TLS state (assertTlsState), and a reconnect in the clear
 * cannot happen at all (Transport).
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
      assertTlsState(this.#options, client);
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
      if (client && client.isConnected && (!this.#options.bind || client.isBound) && tlsStateOk(this.#options, client)) return client;
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

function tlsStateOk(options: ResolvedLdapOptions, client: Client): boolean {
  try {
    assertTlsState(options, client);
    return true;
  } catch {
    return false;
  }
}
