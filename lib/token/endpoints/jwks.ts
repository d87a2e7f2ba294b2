import type { RequestHandler } from 'express';
import type { KeyRing } from '../../keys/index.js';

/** `GET /jwks`: the public keys (all of the ring, for rotation), serialised once. */
export function jwksHandler(keyRing: KeyRing): RequestHandler {
  const body = JSON.stringify(keyRing.jwks);
  return (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300');
    res.type('application/jwk-set+json').send(body);
  };
}
