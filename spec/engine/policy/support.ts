import express, { type Express } from 'express';
import type { Request } from 'express';
import request from 'supertest';
import { expect } from '@jest/globals';
import { adminPredicate, engineRouter, type ContainerRuntime, type EngineCaller, type EnginePolicy } from '../../../lib/engine/index.js';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';

/** A scripted runtime: `busybox` echoes its arguments, or sleeps until killed for `sleep`. */
export function policyRuntime(): ContainerRuntime {
  return scriptedRuntime({
    images: {
      'busybox:latest': async ({ argv, signal }) => {
        if (argv[0] === 'sleep') {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          return {};
        }
        return { stdout: `${argv.slice(1).join(' ')}\n` };
      },
    },
  });
}

/** Specs name their caller in `X-Spec-User` (a host's `caller` function); `root` administers. */
export const callerFromHeader = (req: Request): EngineCaller => {
  const user = req.headers['x-spec-user'];
  return typeof user === 'string' ? { subject: user, claims: {}, access: [] } : { claims: {}, access: [] };
};

export const admin = adminPredicate({ subjects: ['root'] });

export function policyApp(runtime: ContainerRuntime, policy: EnginePolicy): Express {
  const app = express();
  app.use(engineRouter(runtime, '1.24-1.43', { policy, caller: callerFromHeader }));
  return app;
}

/** supertest calls as one user. */
export function as(app: Express, user: string | undefined) {
  const set = <T extends request.Test>(t: T): T => (user === undefined ? t : t.set('X-Spec-User', user));
  return {
    get: (path: string) => set(request(app).get(path)),
    head: (path: string) => set(request(app).head(path)),
    post: (path: string) => set(request(app).post(path)),
    put: (path: string) => set(request(app).put(path)),
    delete: (path: string) => set(request(app).delete(path)),
    options: (path: string) => set(request(app).options(path)),
  };
}

/** Creates (and optionally starts) a busybox container as `user`; its id. */
export async function containerOf(app: Express, user: string, options: { start?: boolean; name?: string; cmd?: string[] } = {}): Promise<string> {
  const created = await as(app, user).post(`/v1.41/containers/create${options.name ? `?name=${options.name}` : ''}`).send({ Image: 'busybox', Cmd: options.cmd ?? ['sleep'] });
  expect({ status: created.status, body: created.body }).toEqual({ status: 201, body: expect.objectContaining({ Id: expect.any(String) }) });
  const id = created.body.Id as string;
  if (options.start) expect((await as(app, user).post(`/v1.41/containers/${id}/start`)).status).toBe(204);
  return id;
}
