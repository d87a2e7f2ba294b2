import type { Router } from 'express';
import { engineRoute, type EngineContext } from '../http/context.js';
import { attachQuery } from './attach-query.js';
import { registerAttachWsRoute } from './attach-ws-route.js';
import { streamContentType } from '../http/output-response.js';
import { detachKeysOf, hijack, isUpgradeEvent, readUpgradeBody, splice, wantsUpgrade } from '../http/hijack.js';

/**
 * `POST /containers/{id}/attach`. With `Upgrade: tcp` (what `docker run` and dockerode send)
 * the answer is `101 UPGRADED` and the connection becomes the raw stream: output out,
 * stdin in. Full duplex needs the server's `upgrade` event routed into the app
 * (`listenEngine` / `handleEngineUpgrades` do it); on a plain request the output still
 * flows, but stdin is not read. Without `Upgrade`, dockerd answers 200 and streams on the same
 * connection until it closes; so does this route. A request body (some SDKs send their attach
 * options there as JSON) is read and discarded as dockerd discards it: on an upgraded connection
 * its `Content-Length` bytes are on the socket ahead of stdin, and must never reach the container.
 */
export function registerAttachRoute(api: Router, ctx: EngineContext): void {
  registerAttachWsRoute(api, ctx);
  api.post(
    '/containers/:id/attach',
    engineRoute(ctx, 'container.attach', async (req, res, version) => {
      const { options, detachKeys: keys } = attachQuery(req);
      if (isUpgradeEvent(req)) await readUpgradeBody(req, ctx.settings.maxBodyBytes);
      const session = await ctx.runtime.attach(req.params.id as string, options);
      const upgrade = wantsUpgrade(req);
      const socket = hijack(req, res, upgrade, streamContentType(session, version) ?? 'application/vnd.docker.raw-stream');
      splice(session, socket, isUpgradeEvent(req), detachKeysOf(session, keys));
    }),
  );
}
