#!/usr/bin/env node
/**
 * `wires`: the service from a terminal.
 *
 *   wires <wire> [q] [--<filter> value] [--since 6h] [--limit 20] [--preview] [--json]
 *   wires stream <wire>[,<wire>…] [q] [--<filter> value] [--ticker …] [--json]
 *   wires health | prices
 *   wires --help | wires <wire> --help
 *
 * Pays with WALLET_PRIVATE_KEY when it is set (within MAX_PRICE_PER_CALL_USD and
 * MAX_SPEND_USD, after checking the offer against the published price list); otherwise
 * shows the free preview and says so. WIRES_URL names the service (default
 * http://localhost:4021).
 *
 * `wires stream` prints items as the service stores them (WebSocket push), paying for blocks
 * of 10 minutes and renewing while MAX_SPEND_USD allows; MAX_PRICE_PER_CALL_USD is compared
 * with the block's price per minute. It needs WALLET_PRIVATE_KEY (streams have no preview).
 */
import { facetsOf } from '../catalog/facets.js';
import { WIRES, type WireDef } from '../catalog/index.js';
import { previewParams, type WiresClient, WiresError, type Article, type Envelope } from './client.js';
import { clientFromEnv } from './env.js';
import type { StreamItem } from './stream.js';
import type { WireId } from './wires.gen.js';

const USAGE = `usage: wires <wire> [q] [--<filter> value] [--since 6h] [--limit 20] [--preview] [--json]
       wires stream <wire>[,<wire>…] [q] [--<filter> value] [--ticker …] [--json]   (push; needs WALLET_PRIVATE_KEY)
       wires health | prices
wires: ${WIRES.map((w) => w.id).join(', ')}, headlines`;

class UsageError extends Error {}

/** `--help` / `-h` / `help`: the usage (and a wire's options), on stdout, exit 0. */
function help(name: string | undefined): string {
  const wire = name === undefined ? undefined : (WIRES.find((w) => w.id === name) ?? WIRES.find((w) => w.paid.some((r) => r.path === `/${name}`)));
  if (!wire) return USAGE;
  const facets = facetsOf(wire.id).map((f) => `, --${f.param} (${f.doc.replace(/\.$/, '')})`);
  return `${USAGE}\n${name}: --${wire.filter.name} ${wire.filter.values.join('|')}${facets.join('')}, --since, --limit, --preview, --json`;
}

interface Parsed {
  wire: WireDef;
  path: string;
  params: Record<string, string>;
  preview: boolean;
  json: boolean;
}

interface StreamArgs {
  stream: WireDef[];
  params: Record<string, string>;
  json: boolean;
}

function parseArgs(argv: string[]): Parsed | StreamArgs | { command: 'health' | 'prices'; json: boolean } | { help: string } {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') return { help: help(rest[0]) };
  if (name === 'stream' && (rest.includes('--help') || rest.includes('-h'))) {
    const wire = WIRES.find((w) => w.id === rest[0]);
    return { help: wire ? `${USAGE}\nstream ${wire.id}: --${wire.filter.name} ${wire.filter.values.join('|')}, --json` : USAGE };
  }
  if (rest.includes('--help') || rest.includes('-h')) return { help: help(name) };
  if (!name) throw new UsageError(USAGE);
  const json = rest.includes('--json');
  if (name === 'health' || name === 'prices') return { command: name, json };
  if (name === 'stream') return parseStream(rest, json);
  // A wire id, or another paid route by name (headlines).
  const wire = WIRES.find((w) => w.id === name) ?? WIRES.find((w) => w.paid.some((r) => r.path === `/${name}`));
  if (!wire) throw new UsageError(`unknown wire "${name}"; wires: ${WIRES.map((w) => w.id).join(', ')}, headlines`);
  const route = wire.paid.find((r) => r.path === `/${name}`) ?? wire.paid[0]!;
  const params: Record<string, string> = {};
  let preview = false;
  const options = ['since', 'limit', wire.filter.name, ...facetsOf(wire.id).map((f) => f.param)];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--json') continue;
    if (arg === '--preview') {
      preview = true;
      continue;
    }
    if (arg.startsWith('--')) {
      const key = arg.slice(2);
      if (!options.includes(key)) throw new UsageError(`unknown option --${key} for ${name}; options: ${options.map((o) => '--' + o).join(', ')}, --preview, --json`);
      const value = rest[++i];
      if (value === undefined) throw new UsageError(`--${key} needs a value`);
      if (key === wire.filter.name && !wire.filter.values.includes(value)) {
        throw new UsageError(`invalid --${key} "${value}"; allowed: ${wire.filter.values.join(', ')}`);
      }
      params[key] = value;
    } else if (route.q !== 'none' && params.q === undefined) {
      params.q = arg;
    } else {
      throw new UsageError(`unexpected argument "${arg}"\n${USAGE}`);
    }
  }
  if (route.qRequired && params.q === undefined && !preview) throw new UsageError(`${name} needs search terms: wires ${name} "rate cut"`);
  return { wire, path: route.path, params, preview, json };
}

/**
 * `stream <wire>[,<wire>…] [q] [--<filter> value] [--ticker …] [--json]`: a stream takes the
 * wire's filter, q and its field filters; several wires share one connection and payment.
 */
function parseStream([name, ...rest]: string[], json: boolean): StreamArgs {
  const names = (name ?? '').split(',');
  const wires = names.map((n) => WIRES.find((w) => w.id === n));
  const bad = names.find((_, i) => !wires[i]);
  if (!name || bad !== undefined) throw new UsageError(name ? `unknown wire "${bad}"; wires: ${WIRES.map((w) => w.id).join(', ')}` : USAGE);
  const wire = wires[0]!;
  const params: Record<string, string> = {};
  const facets = [...new Set(wires.flatMap((w) => facetsOf(w!.id).map((f) => f.param)))];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--json') continue;
    if (wires.length === 1 && arg === `--${wire.filter.name}`) {
      const value = rest[++i];
      if (value === undefined || !wire.filter.values.includes(value)) throw new UsageError(`invalid --${wire.filter.name} "${value ?? ''}"; allowed: ${wire.filter.values.join(', ')}`);
      params[wire.filter.name] = value;
    } else if (facets.includes(arg.slice(2))) {
      const value = rest[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      params[arg.slice(2)] = value;
    } else if (arg.startsWith('--')) {
      throw new UsageError(`unknown option ${arg} for wires stream ${name}; options: ${[wire.filter.name, ...facets].map((o) => `--${o}`).join(', ')}, --json`);
    } else if (params.q === undefined) params.q = arg;
    else throw new UsageError(`unexpected argument "${arg}"\n${USAGE}`);
  }
  return { stream: wires as WireDef[], params, json };
}

const tty = process.stdout.isTTY === true;
const paint = (code: string, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);

function age(minutes: number): string {
  if (minutes < 60) return `${minutes}m`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)}h`;
  return `${Math.floor(minutes / 1440)}d`;
}

function table(env: Envelope): string {
  if (env.articles.length === 0) return 'no results';
  const width = Math.max(40, (process.stdout.columns || 120) - 60);
  return env.articles
    .map((a) => {
      const title = a.title.length > width ? a.title.slice(0, width - 1) + '…' : a.title;
      return `${paint('2', age(a.age_minutes).padStart(4))}  ${paint('36', String(a.source).slice(0, 18).padEnd(18))}  ${paint('1', title)}\n${' '.repeat(26)}${paint('2', a.url)}`;
    })
    .join('\n');
}

/** One line per item: time, source, title, url. */
function line({ update, item }: { update: boolean; item: Article }): string {
  const time = new Date(item.published).toTimeString().slice(0, 8);
  return `${paint('2', time)}  ${paint('36', String(item.source).slice(0, 18).padEnd(18))}  ${paint('1', item.title)}${update ? paint('2', ' (updated)') : ''}  ${paint('2', item.url)}`;
}

/** Prints pushed items until the stream ends (an error: exit 1) or the process is stopped. */
async function stream(client: WiresClient, { stream: wires, params, json }: StreamArgs): Promise<number> {
  const ids = wires.map((w) => w.id);
  if (!client.canPay)
    throw new WiresError(
      'payment_required',
      `wires stream needs WALLET_PRIVATE_KEY: the ${ids.join(',')} stream is paid by blocks of 10 minutes (see \`wires prices\`); without a key, poll the free preview: wires ${ids[0]}`,
    );
  const s = client.stream(ids as WireId[], params, {
    onEvent: (e) =>
      process.stderr.write(
        e.type === 'paid'
          ? `paid ${e.usd} USD for the stream until ${e.paidUntil}; spent this run: ${+client.spentUsd.toFixed(6)} USD\n`
          : `not renewing: ${e.error.message}; the stream ends at ${e.paidUntil}\n`,
      ),
  });
  s.ready.then(
    (sub) => process.stderr.write(`subscribed to ${sub}; waiting for new items (Ctrl-C to stop)\n`),
    () => {},
  );
  for await (const item of s as AsyncIterable<StreamItem>) process.stdout.write((json ? JSON.stringify(item) : line(item)) + '\n');
  return 0;
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if ('help' in parsed) {
    process.stdout.write(parsed.help + '\n');
    return 0;
  }
  const client: WiresClient = clientFromEnv();
  if ('stream' in parsed) return stream(client, parsed);
  if ('command' in parsed) {
    const value = parsed.command === 'health' ? await client.health() : Object.fromEntries(await client.prices());
    process.stdout.write(JSON.stringify(value, null, 2) + '\n');
    return 0;
  }
  const { wire, json } = parsed;
  let { path, params } = parsed;
  if (parsed.preview || !client.canPay) {
    if (!parsed.preview) process.stderr.write(`no WALLET_PRIVATE_KEY: showing the free preview (top 3) of ${wire.id}\n`);
    path = wire.preview.path;
    params = previewParams(path, params);
  }
  const result = await client.call(path, params);
  if (json) process.stdout.write(JSON.stringify(result.envelope, null, 2) + '\n');
  else process.stdout.write(table(result.envelope) + '\n');
  if (result.paidUsd > 0) {
    const tx = result.settlement?.transaction || 'settlement pending';
    process.stderr.write(`paid ${result.paidUsd} USD (${tx}); spent this run: ${client.spentUsd} USD\n`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError) {
      process.stderr.write(err.message + '\n');
      return process.exit(2);
    }
    if (err instanceof WiresError) {
      process.stderr.write(`wires: ${err.explain('\n')}\n`);
      return process.exit(1);
    }
    process.stderr.write(`wires: ${(err as Error)?.message ?? err}\n`);
    process.exit(1);
  },
);
