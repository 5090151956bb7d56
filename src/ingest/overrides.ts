/**
 * `WIRES_SOURCES=path.json`: points sources at a mirror, a proxy or a local fixture server.
 * The file is a JSON object of source id → absolute http(s) URL. Anything unexpected in it is
 * an error at start, because a silently ignored override would poll the wrong place.
 */
import { readFileSync } from 'node:fs';
import { SOURCES } from '../catalog/index.js';
import { TICKER_MAP } from '../catalog/reference.js';
import { ConfigError } from '../config.js';

export function loadOverrides(path: string | null): ReadonlyMap<string, string> {
  if (!path) return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`WIRES_SOURCES: cannot read ${path}: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`WIRES_SOURCES: ${path} must hold a JSON object of source id → URL`);
  }
  const known = new Set([...SOURCES.map((s) => s.id), TICKER_MAP.id]);
  const out = new Map<string, string>();
  for (const [id, url] of Object.entries(parsed)) {
    if (!known.has(id)) throw new ConfigError(`WIRES_SOURCES: unknown source id "${id}" (see /sources for the ids)`);
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
      throw new ConfigError(`WIRES_SOURCES: source "${id}" must map to an absolute http(s) URL`);
    }
    try {
      new URL(url);
    } catch {
      throw new ConfigError(`WIRES_SOURCES: source "${id}" has an invalid URL "${url}"`);
    }
    out.set(id, url);
  }
  return out;
}
