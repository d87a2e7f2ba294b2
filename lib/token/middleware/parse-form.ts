import express, { type Request, type RequestHandler } from 'express';

/**
 * Parses `application/x-www-form-urlencoded` bodies (containerd adds `; charset=utf-8`) with
 * duplicate fields kept as arrays, so the validator's `duplicateField` (reject-duplicates.ts) can see them.
 */
export function parseForm(limit: number): RequestHandler {
  return express.urlencoded({ extended: false, limit, parameterLimit: 100 });
}

/** RFC 6749 §3.2 requires the form encoding: any other body type is `invalid_request`. */
export function isForm(req: Request): boolean {
  return typeof req.body === 'object' && req.body !== null && Boolean(req.is('application/x-www-form-urlencoded'));
}
