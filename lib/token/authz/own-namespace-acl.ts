import type { AclRule } from './acl-rule.js';

/**
 * The demo's default rules: every authenticated user may pull and push their own namespace at any
 * depth (`alice/app`, `alice/team/app`) and pull `library/…`; anonymous requests get nothing.
 *
 * The owner rule uses `${account}/**` (`**` crosses `/`; see `AclMatch`); accounts holding
 * `/` are left out so `alice/team` cannot own part of `alice`'s namespace. The library rule comes
 * first because the first match wins: a user who signs up as `library` still only pulls there.
 * A fresh array is returned, so hosts can put their own rules before or after it.
 *
 * @example
 * const authorize = aclAuthorizer([{ match: { account: 'admin' }, actions: ['*'] }, ...ownNamespaceAcl()]);
 */
export function ownNamespaceAcl(): AclRule[] {
  return [
    {
      comment: 'authenticated users pull library images; nobody pushes there through this rule',
      match: { account: '/.+/', type: 'repository', name: 'library/**' },
      actions: ['pull'],
    },
    {
      comment: 'authenticated users pull and push in their own namespace',
      match: { account: '/[^/]+/', type: 'repository', name: '${account}/**' },
      actions: ['pull', 'push'],
    },
  ];
}
