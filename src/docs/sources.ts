/** `/sources`: every source of every wire, as the catalogue declares it. */
import { SOURCES } from '../catalog/index.js';

export function buildSourceList(): object[] {
  return SOURCES.map((s) => ({
    id: s.id,
    name: s.name,
    wire: s.wire.paid[0]!.path,
    filter: s.filter,
    format: s.format,
    url: s.url,
    tier: s.wire.tier,
  }));
}
