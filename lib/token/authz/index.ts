export type { AuthorizationRequest, Authorizer } from './types.js';
export type { AclRule, AclMatch } from './acl-rule.js';
export { aclAuthorizer } from './acl-authorizer.js';
export type { AclAuthorizerOptions, AclDecision, AclSource } from './acl-authorizer.js';
export { ownNamespaceAcl } from './own-namespace-acl.js';
