/** The little of oidc-provider 9 (untyped JavaScript) the interop specs use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface OidcClient { clientId: string }
  interface IdTokenInstance {
    set(claim: string, value: unknown): void;
    issue(options: { use: 'idtoken'; expiresAt?: number }): Promise<string>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    Client: { find(id: string): Promise<OidcClient | undefined> };
    IdToken: new (claims: Record<string, unknown>, options: { client: OidcClient }) => IdTokenInstance;
  }
}
