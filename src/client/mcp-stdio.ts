#!/usr/bin/env node
/**
 * `wires-mcp`: a local MCP server on stdio that exposes the service's tools and pays for the
 * paid ones from a wallet (WALLET_PRIVATE_KEY), within MAX_PRICE_PER_CALL_USD per call and
 * MAX_SPEND_USD per process, after checking each offer against the published price list.
 * When it cannot or may not pay, it answers with the free preview and says why.
 *
 * `stream_poll` turns the service's push stream into something an agent can poll: its first
 * call opens a paid subscription (WebSocket, renewed while MAX_SPEND_USD allows) and each
 * later call with the same arguments returns the items that arrived since the previous one.
 *
 * The transport is MCP's stdio: one JSON-RPC message per line on stdin and stdout, logs on
 * stderr. The JSON-RPC layer is the service's own (mcp/jsonrpc.ts), so the client package
 * needs no MCP library.
 */
import { createInterface } from 'node:readline';
import { WIRES } from '../catalog/index.js';
import { answerMcp, ERR, rpcError, type RpcOutcome } from '../mcp/jsonrpc.js';
import { ROUTE_BY_TOOL, TICKERS_TOOL, TOOLS, type ToolDef } from '../mcp/tools.js';
import { previewParams, WiresError, type CallResult } from './client.js';
import { clientFromEnv } from './env.js';
import type { WireStream } from './stream.js';
import type { WireId } from './wires.gen.js';

const client = clientFromEnv();

const text = (t: string) => [{ type: 'text' as const, text: t }];
const describe = (r: CallResult) => JSON.stringify(r.envelope);

const STREAM_POLL: ToolDef = {
  name: 'stream_poll',
  title: 'Poll a live push subscription of a wire',
  description:
    "Subscribes to a wire's live stream and returns the items stored since the previous call with the same arguments. The first call opens the subscription (paid from the local wallet in blocks of 10 minutes at 10x the wire's per-call price, renewed automatically within the spending limit) and returns no items yet; call again later to collect new ones.",
  inputSchema: {
    type: 'object',
    properties: {
      wire: { type: 'string', enum: WIRES.map((w) => w.id), description: 'The wire to follow' },
      filter: { type: 'string', description: "A value of the wire's filter (e.g. markets for news, 8-k for edgar); omit for all" },
      q: { type: 'string', description: 'Search terms an item must match; omit for all items' },
    },
    required: ['wire'],
    additionalProperties: false,
  },
};

/** Open subscriptions by their arguments: one stream each, polled by later calls. */
const streams = new Map<string, WireStream>();

async function streamPoll(args: Record<string, string>) {
  const wire = WIRES.find((w) => w.id === args.wire);
  if (!wire) return { isError: true, content: text(`unknown wire "${args.wire}" (allowed: ${WIRES.map((w) => w.id).join(', ')})`) };
  if (!client.canPay) return { isError: true, content: text('Streams are paid and no WALLET_PRIVATE_KEY is configured, so no subscription was opened. Use the free preview tools instead.') };
  const params: Record<string, string> = {};
  if (args.filter) params[wire.filter.name] = args.filter;
  if (args.q) params.q = args.q;
  const key = JSON.stringify([wire.id, params]);
  let stream = streams.get(key);
  if (!stream) {
    try {
      stream = client.stream(wire.id as WireId, params);
      streams.set(key, stream);
      const sub = await stream.ready;
      return {
        content: text(
          `Subscribed to ${sub}, paid until ${stream.paidUntil} (spent this session: ${+client.spentUsd.toFixed(6)} USD). No items yet: call stream_poll again with the same arguments to get the items that arrived since.`,
        ),
      };
    } catch (err) {
      streams.delete(key);
      return { isError: true, content: text(`No subscription opened: ${(err as Error).message}`) };
    }
  }
  const items = stream.take();
  const notes: string[] = [];
  if (stream.dropped) notes.push(`${stream.dropped} items in all were dropped (the oldest) because nobody polled for long.`);
  if (stream.closed) {
    // The next call with these arguments opens (and pays for) a new subscription.
    streams.delete(key);
    notes.push(`The subscription has ended: ${stream.error?.message ?? 'closed'}. Calling again opens a new one (a new payment).`);
  } else notes.push(`Subscription ${stream.sub} is paid until ${stream.paidUntil}; spent this session: ${+client.spentUsd.toFixed(6)} USD.`);
  return { content: text(JSON.stringify({ count: items.length, items })).concat(text(notes.join(' '))) };
}

const stringArgs = (args: unknown) => Object.fromEntries(Object.entries(args ?? {}).map(([k, v]) => [k, String(v)]));

async function callTool(params: Record<string, unknown>): Promise<RpcOutcome> {
  if (params.name === STREAM_POLL.name) return { result: await streamPoll(stringArgs(params.arguments)) };
  // The free lookup is the service's own /tickers, asked as it is.
  if (params.name === TICKERS_TOOL.name) {
    try {
      return { result: { content: text(JSON.stringify(await client.tickers(stringArgs(params.arguments)))) } };
    } catch (err) {
      return { result: { isError: true, content: text(err instanceof WiresError ? err.explain() : (err as Error).message) } };
    }
  }
  const route = typeof params.name === 'string' ? ROUTE_BY_TOOL.get(params.name) : undefined;
  if (!route) return rpcError(ERR.invalidParams, `Unknown tool: ${String(params.name)}. tools/list names them.`);
  const args = stringArgs(params.arguments);
  const preview = async (why: string) => {
    // The caller's limit, capped at the preview's 3.
    const result = await client.call(route.previewPath, previewParams(route.previewPath, args));
    return { content: text(`${why} Showing the free preview (top 3) instead.`).concat(text(describe(result))) };
  };
  try {
    if (route.kind === 'preview') return { result: { content: text(describe(await client.call(route.path, args))) } };
    if (!client.canPay) return { result: await preview('No WALLET_PRIVATE_KEY is configured, so nothing was paid.') };
    try {
      const result = await client.call(route.path, args);
      const tx = result.settlement?.transaction || 'settlement pending';
      return {
        result: {
          content: text(describe(result)).concat(text(`Paid ${result.paidUsd} USD (${tx}); spent this session: ${client.spentUsd} USD.`)),
          _meta: { 'x402/payment-response': result.settlement },
        },
      };
    } catch (err) {
      // Parameter errors are the caller's to fix; payment problems fall back to the preview.
      if (err instanceof WiresError && err.details.status === 400) throw err;
      return { result: await preview(`Payment not made: ${(err as Error).message.replace(/\.$/, '')}.`) };
    }
  } catch (err) {
    return { result: { isError: true, content: text(err instanceof WiresError ? err.explain() : (err as Error).message) } };
  }
}

const server = {
  info: { name: 'wires-mcp', version: '0.1.0' },
  instructions: 'Real-time data wires, paid from the local wallet within its limits. *_preview tools are free (top 3); stream_poll follows a wire live.',
  tools: [...TOOLS, STREAM_POLL],
  callTool,
};

// Requests are answered as they complete, not in turn: a ping is not held behind a paid call.
const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  answerMcp(line, server).then(
    ({ body }) => {
      if (body !== null) process.stdout.write(`${body}\n`);
    },
    (err: unknown) => process.stderr.write(`wires-mcp: ${(err as Error).message}\n`),
  );
});
// The client closed stdin: end the subscriptions so the process can exit.
lines.on('close', () => {
  for (const stream of streams.values()) stream.close();
});
