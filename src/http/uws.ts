/**
 * Loads uWebSockets.js and tells whether the native binary is what got loaded.
 *
 * The package we depend on (DESIGN decision 1) silently falls back to a pure-Node
 * implementation when its binary does not match the platform; that fallback is an order of
 * magnitude slower, so the caller refuses to start on it unless explicitly allowed.
 */
import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

export interface LoadedUws {
  uws: typeof UWS;
  native: boolean;
  /** The binary file, when native. */
  binary: string | null;
}

export function loadUws(): LoadedUws {
  const uws = require('uWebSockets.js') as typeof UWS;
  const binary = Object.keys(require.cache).find((k) => /uws_[^/\\]+\.node$/.test(k)) ?? null;
  return { uws, native: binary !== null, binary };
}
