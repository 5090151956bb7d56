#!/usr/bin/env node
/**
 * `wires-mcp`: a local MCP server on stdio that exposes the service's tools and pays for the
 * paid ones from a wallet (WALLET_PRIVATE_KEY), within MAX_PRICE_PER_CALL_USD per call and
 * MAX_SPEND_USD per process, after checking each offer against the published price list.
 * When it cannot or may not pay, it answers with the free preview and says why.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROUTE_BY_TOOL, TOOLS } from '../mcp/tools.js';
import { previewParams, WiresError, type CallResult } from './client.js';
import { clientFromEnv } from './env.js';

const client = clientFromEnv();
const server = new Server({ name: 'wires-mcp', version: '0.1.0' }, { capabilities: { tools: {} } });

const text = (t: string) => [{ type: 'text' as const, text: t }];
const describe = (r: CallResult) => JSON.stringify(r.envelope);

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS] }));

server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const route = ROUTE_BY_TOOL.get(req.params.name);
  if (!route) return { isError: true, content: text(`unknown tool ${req.params.name}`) };
  const args = Object.fromEntries(Object.entries(req.params.arguments ?? {}).map(([k, v]) => [k, String(v)]));
  const preview = async (why: string) => {
    // The caller's limit, capped at the preview's 3.
    const result = await client.call(route.previewPath, previewParams(route.previewPath, args));
    return { content: text(`${why} Showing the free preview (top 3) instead.`).concat(text(describe(result))) };
  };
  try {
    if (route.kind === 'preview') return { content: text(describe(await client.call(route.path, args))) };
    if (!client.canPay) return await preview('No WALLET_PRIVATE_KEY is configured, so nothing was paid.');
    try {
      const result = await client.call(route.path, args);
      const tx = result.settlement?.transaction || 'settlement pending';
      return {
        content: text(describe(result)).concat(text(`Paid ${result.paidUsd} USD (${tx}); spent this session: ${client.spentUsd} USD.`)),
        _meta: { 'x402/payment-response': result.settlement },
      };
    } catch (err) {
      // Parameter errors are the caller's to fix; payment problems fall back to the preview.
      if (err instanceof WiresError && err.details.status === 400) throw err;
      return await preview(`Payment not made: ${(err as Error).message}.`);
    }
  } catch (err) {
    const allowed = err instanceof WiresError ? (err.details.allowed as string[] | undefined) : undefined;
    return { isError: true, content: text(`${(err as Error).message}${allowed ? ` (allowed: ${allowed.join(', ')})` : ''}`) };
  }
});

await server.connect(new StdioServerTransport());
