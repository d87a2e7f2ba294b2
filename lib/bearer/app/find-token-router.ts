import type { Application } from 'express';
import { tokenRouterLink, type TokenRouterLink } from '../../token/token-router-link.js';

/** A tokenRouter found in an app's router stack, with the URL path of its token route when it has a single plain one. */
export interface MountedTokenRouter {
  link: TokenRouterLink;
  /** `/auth/token` for a router mounted at `/auth`; undefined when a mount path is a pattern, a list or a RegExp. */
  tokenRoutePath?: string;
}

/** The few fields of Express 5's app and router (the `router` package) the walk reads. */
interface StackLayer {
  handle?: unknown;
  route?: unknown;
  rawPath?: unknown;
}
interface AppLike {
  router?: { stack?: StackLayer[] };
  parent?: AppLike;
  mountpath?: unknown;
}

/** A mount path usable in a URL: a plain string with no route parameters or wildcards. */
function plainPath(path: unknown): string | undefined {
  if (typeof path !== 'string' || /[:*?()[\]{}+]/.test(path)) return undefined;
  return path.replace(/\/+$/, '');
}

function join(prefix: string | undefined, path: unknown): string | undefined {
  const tail = plainPath(path);
  return prefix === undefined || tail === undefined ? undefined : prefix + tail;
}

function walk(stack: readonly StackLayer[], prefix: string | undefined, found: MountedTokenRouter[], depth: number): void {
  // Nesting deeper than this is a loop (a router mounted inside itself), not an app.
  if (depth > 32) return;
  for (const layer of stack) {
    if (layer.route !== undefined) continue;
    const link = tokenRouterLink(layer.handle);
    const path = join(prefix, layer.rawPath);
    if (link) {
      const tokenRoutePath = path === undefined ? undefined : path + link.tokenPath;
      found.push({ link, ...(tokenRoutePath !== undefined ? { tokenRoutePath } : {}) });
      continue;
    }
    const nested = (layer.handle as { stack?: unknown } | undefined)?.stack;
    if (Array.isArray(nested)) walk(nested as StackLayer[], path, found, depth + 1);
  }
}

/** The URL path of an app as mounted in its parents (`''` for the top app), or undefined when not a plain one. */
function appPrefix(app: AppLike): string | undefined {
  let prefix = '';
  for (let a: AppLike | undefined = app; a?.parent; a = a.parent) {
    const own = plainPath(a.mountpath);
    if (own === undefined) return undefined;
    prefix = own + prefix;
  }
  return prefix;
}

/**
 * Finds the tokenRouters mounted in the app serving a request and in the apps it is mounted in,
 * nested routers included. A sub-app mounted beside this one is not visible from here: Express
 * keeps no reference from a parent to its sub-apps' routers.
 */
export function findTokenRouters(app: Application): MountedTokenRouter[] {
  const found: MountedTokenRouter[] = [];
  for (let a: AppLike | undefined = app as unknown as AppLike; a; a = a.parent) {
    const stack = a.router?.stack;
    if (Array.isArray(stack)) walk(stack, appPrefix(a), found, 0);
  }
  return found;
}
