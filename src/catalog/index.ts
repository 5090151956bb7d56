/**
 * Lookups derived from the catalogue once, at import time. Nothing here is written by hand
 * per wire: add a wire to ./wires.ts and every route, schema and document follows.
 */
import { durationMs } from './duration.js';
import { WIRE_FIELDS } from './fields.js';
import { WIRES, type RouteDef, type SourceDef, type Tier, type WireDef } from './wires.js';

export { WIRES } from './wires.js';
export { fieldsOf, WIRE_FIELDS, type FieldDef } from './fields.js';
export { budgetOf, DEFAULT_BUDGET, HOST_BUDGETS, intervalRange, QUIET_SHARE, scheduleText, TIER_POLLING, wireSchedule } from './polling.js';
export type { QueryKind, RouteDef, SourceDef, SourceFormat, Tier, WireDef } from './wires.js';

export interface Route {
  path: string;
  kind: 'paid' | 'preview';
  wire: WireDef;
  def: RouteDef;
  /** Price in USDC atomic units (6 decimals), paid routes only: "5000" for 0.005. */
  amount?: string;
  /** The free route a client falls back to after a 402. */
  previewPath: string;
  /** Summaries are omitted on the news preview route (spec 2.2). */
  withSummary: boolean;
  /** Retention of the wire, which is also the default and the largest `since`. */
  retentionMs: number;
}

/** Spellings used in the specification's examples that are not routes of the contract. */
export const REDIRECTS: ReadonlyMap<string, string> = new Map([['/quakes/preview', '/quake/preview']]);

/** The filter values a source feeds: its own, or every value it routes entries to. */
export function filtersOf(source: Pick<SourceDef, 'filter' | 'routes'>): string[] {
  return source.routes ? Object.keys(source.routes) : [source.filter!];
}

/** Converts a decimal USD price to USDC atomic units without floating point. */
export function usdToAtomic(price: string): string {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(price);
  if (!m) throw new Error(`invalid price ${price}`);
  return (BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'))).toString();
}

export function retentionMs(wire: WireDef): number {
  const ms = durationMs(wire.retention);
  if (ms === undefined) throw new Error(`wire ${wire.id}: bad retention ${wire.retention}`);
  return ms;
}

function buildRoutes(): Route[] {
  const routes: Route[] = [];
  for (const wire of WIRES) {
    const base = { wire, previewPath: wire.preview.path, retentionMs: retentionMs(wire) };
    for (const def of wire.paid) {
      routes.push({ ...base, path: def.path, kind: 'paid', def, amount: usdToAtomic(def.price!), withSummary: true });
    }
    routes.push({ ...base, path: wire.preview.path, kind: 'preview', def: wire.preview, withSummary: wire.id !== 'news' });
  }
  return routes;
}

export const ROUTES: readonly Route[] = buildRoutes();
export const ROUTE_BY_PATH: ReadonlyMap<string, Route> = new Map(ROUTES.map((r) => [r.path, r]));
export const PAID_ROUTES: readonly Route[] = ROUTES.filter((r) => r.kind === 'paid');
export const PREVIEW_ROUTES: readonly Route[] = ROUTES.filter((r) => r.kind === 'preview');

export const SOURCES: readonly (SourceDef & { wire: WireDef })[] = WIRES.flatMap((wire) => wire.sources.map((s) => ({ ...s, wire })));

export function wiresPerTier(): Record<Tier, number> {
  const out: Record<Tier, number> = { breaking: 0, timely: 0, sparse: 0 };
  for (const w of WIRES) out[w.tier]++;
  return out;
}

/** Checks the catalogue's own invariants; run by tests and at start-up. */
export function checkCatalog(): void {
  const paths = new Set<string>();
  const sourceIds = new Set<string>();
  for (const wire of WIRES) {
    for (const r of [...wire.paid, wire.preview]) {
      if (paths.has(r.path)) throw new Error(`duplicate route ${r.path}`);
      paths.add(r.path);
    }
    for (const v of wire.filter.values) {
      if (v !== v.toLowerCase()) throw new Error(`${wire.id}: filter value ${v} is not lowercase`);
      if (!wire.sources.some((s) => filtersOf(s).includes(v))) throw new Error(`${wire.id}: filter value ${v} has no source`);
    }
    for (const s of wire.sources) {
      if (sourceIds.has(s.id)) throw new Error(`duplicate source id ${s.id}`);
      sourceIds.add(s.id);
      if ((s.filter === undefined) === (s.routes === undefined)) throw new Error(`${s.id}: a source has either a filter or routes`);
      for (const f of filtersOf(s)) if (!wire.filter.values.includes(f)) throw new Error(`${s.id}: unknown filter ${f}`);
    }
    retentionMs(wire);
  }
  for (const [wire, fields] of Object.entries(WIRE_FIELDS)) {
    if (!WIRES.some((w) => w.id === wire)) throw new Error(`fields for unknown wire ${wire}`);
    if (new Set(fields.map((f) => f.name)).size !== fields.length) throw new Error(`${wire}: a field declared twice`);
    for (const f of fields) if (!/^[a-z][a-z0-9_]*$/.test(f.name)) throw new Error(`${wire}: field ${f.name} is not snake_case`);
  }
}
