/**
 * MCP's JSON-RPC layer for a tools-only server, shared by the service's `POST /mcp` and the
 * client's `wires-mcp` on stdio: one message in, at most one answer out. It checks the
 * envelope, negotiates the protocol version, answers `initialize`, `ping` and `tools/list`,
 * and hands `tools/call` to the server. Notifications get no answer. Batches (removed from
 * MCP in 2025-06-18) are refused. Free of HTTP and of any I/O, so each transport frames it.
 */

export const PROTOCOL_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'] as const;

export type Id = string | number | null;
export const ERR = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603 } as const;

/** What a `tools/call` comes to: a result, or a JSON-RPC error (an unknown tool). */
export type RpcOutcome = { result: unknown } | { error: { code: number; message: string } };

export interface McpServer {
  info: { name: string; version: string };
  instructions: string;
  tools: readonly object[];
  callTool(params: Record<string, unknown>): Promise<RpcOutcome>;
}

export interface McpAnswer {
  /** `message`: a valid request's answer; `invalid`: the message could not be read; `none`: a notification. */
  kind: 'message' | 'invalid' | 'none';
  body: string | null;
}

const answer = (id: Id, outcome: RpcOutcome): McpAnswer => ({ kind: 'message', body: JSON.stringify({ jsonrpc: '2.0', id, ...outcome }) });
const invalid = (code: number, message: string, id: Id = null): McpAnswer => ({ kind: 'invalid', body: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) });
export const rpcError = (code: number, message: string): RpcOutcome => ({ error: { code, message } });

export async function answerMcp(raw: string, server: McpServer): Promise<McpAnswer> {
  let msg: unknown;
  try {
    msg = JSON.parse(raw);
  } catch {
    return invalid(ERR.parse, 'Parse error: the message is not JSON');
  }
  if (Array.isArray(msg)) return invalid(ERR.invalidRequest, 'Batch requests are not supported; send one JSON-RPC message at a time');
  if (typeof msg !== 'object' || msg === null) return invalid(ERR.invalidRequest, 'Invalid request: expected a JSON-RPC 2.0 object');
  const m = msg as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const hasId = 'id' in m;
  const id: Id = typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (hasId && id === null)) {
    return invalid(ERR.invalidRequest, 'Invalid request: jsonrpc must be "2.0", method a string, id a string or number', id);
  }
  // Notifications (initialized, cancelled, …) and answers to requests we never send need no answer.
  if (!hasId) return { kind: 'none', body: null };
  const params = (m.params ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return answer(id, rpcError(ERR.invalidParams, 'params must be an object'));

  switch (m.method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      const protocolVersion = PROTOCOL_VERSIONS.includes(asked as never) ? (asked as string) : PROTOCOL_VERSIONS[0];
      return answer(id, { result: { protocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: server.info, instructions: server.instructions } });
    }
    case 'ping':
      return answer(id, { result: {} });
    case 'tools/list':
      return answer(id, { result: { tools: server.tools } });
    case 'tools/call':
      return answer(id, await server.callTool(params));
    default:
      return answer(id, rpcError(ERR.methodNotFound, `Method not found: ${m.method}`));
  }
}
