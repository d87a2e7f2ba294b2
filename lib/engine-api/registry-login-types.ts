/** The body of `POST /auth` (types/registry.AuthConfig): a credential, never logged or echoed. */
export interface RegistryLoginRequest {
  username?: string;
  password?: string;
  serveraddress?: string;
  /** A refresh token from an earlier login (`docker login` stores it as `identitytoken`). */
  identitytoken?: string;
  [field: string]: unknown;
}

/** dockerd's answer to a successful `POST /auth`. */
export interface RegistryLoginResult {
  Status: 'Login Succeeded';
  /** A refresh token the CLI stores instead of the password, when the token service issued one. */
  IdentityToken?: string;
}
