import type { Router } from 'express';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { RegistryLoginRequest } from '../../images/registry/registry-login.js';

/**
 * `POST /auth`: what `docker login` calls when DOCKER_HOST names an engine (the CLI only logs in
 * by itself when the engine cannot be reached). The body holds a password or identity token: it
 * is handed to the runtime and never logged or echoed.
 */
export function registerAuthRoute(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  api.post(
    '/auth',
    engineRoute(ctx, 'system.auth', async (req, res) => {
      const body = await readJsonBody(req, ctx.settings.maxBodyBytes);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw EngineError.invalidParameter('the login body must be a JSON object (username, password, serveraddress)');
      if (!runtime.login) throw EngineError.unsupported('registry login (POST /auth)', runtime.name);
      const connectCheck = engineLocals(res).policy?.connectCheck;
      writeEngineJson(res.status(200), await runtime.login(body as RegistryLoginRequest, connectCheck ? { connectCheck } : {}));
    }),
  );
}
