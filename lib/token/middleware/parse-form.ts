import express, { type RequestHandler } from 'express';
import { OAuthError } from '../oauth-error.js';

/**
 * Parses `application/x-www-form-urlencoded` bodies (containerd adds `; charset=utf-8`) with
 * duplicate fields kept as arrays, so {@link rejectDuplicates} can see them. Any other body type
 * is `invalid_request`, as RFC 6749 §3.2 requires the form encoding.
 */
export function parseForm(limit: number): RequestHandler[] {
  const urlencoded = express.urlencoded({ extended: false, limit, parameterLimit: 100 });
  const requireForm: RequestHandler = (req, _res, next) => {
    if (!req.is('application/x-www-form-urlencoded') || typeof req.body !== 'object' || req.body === null) {
      next(new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded'));
      return;
    }
    next();
  };
  return [urlencoded, requireForm];
}
