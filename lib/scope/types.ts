/**
 * One resource scope of the distribution token protocol: `type[(class)]:name:action[,action…]`.
 *
 * The class (`repository(plugin)`) is deprecated and ignored by registries: the parser keeps it
 * (so `formatScope` can echo one scope as written), but merging scopes, granting and checking
 * access all go by type and name alone and drop it.
 */
export interface ResourceScope {
  /** Resource type, e.g. `repository` or `registry`. */
  type: string;
  /** Resource class from `type(class)`, if any. Ignored when comparing scopes. */
  class?: string;
  /** Resource name, e.g. `library/ubuntu` or `localhost:5000/team/app`. */
  name: string;
  /** Requested actions, e.g. `['pull', 'push']`; `*` means every action. */
  actions: string[];
}

/** One entry of a JWT's `access` claim, as registries read it. */
export interface AccessEntry {
  type: string;
  name: string;
  actions: string[];
}
