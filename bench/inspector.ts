/**
 * A process's V8 inspector, reached over its loopback port (`node --inspect=127.0.0.1:PORT`):
 * the Chrome DevTools Protocol's commands, in the main thread or in every worker thread
 * (Node's NodeWorker domain attaches to each worker as it starts, and relays its messages).
 */
import WebSocket from 'ws';

type Reply = { id?: number; result?: unknown; error?: { message: string } };

export interface Inspector {
  call<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** The same command in every worker thread running now, one answer each. */
  callWorkers<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T[]>;
  close(): void;
}

export async function connectInspector(port: number): Promise<Inspector> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  /** Calls waiting for their reply, by session ('' for the main thread) and id. */
  const pending = new Map<string, (reply: Reply) => void>();
  const workers = new Set<string>();
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as Reply & { method?: string; params?: { sessionId: string; message?: string } };
    if (msg.method === 'NodeWorker.attachedToWorker') workers.add(msg.params!.sessionId);
    else if (msg.method === 'NodeWorker.detachedFromWorker') workers.delete(msg.params!.sessionId);
    else if (msg.method === 'NodeWorker.receivedMessageFromWorker') {
      const reply = JSON.parse(msg.params!.message!) as Reply;
      if (reply.id !== undefined) pending.get(`${msg.params!.sessionId}:${reply.id}`)?.(reply);
    } else if (msg.id !== undefined) pending.get(`:${msg.id}`)?.(msg);
  });
  ws.on('close', () => {
    for (const settle of pending.values()) settle({ error: { message: 'inspector closed' } });
  });
  let next = 0;
  /** Sends a command to the main thread (session '') or a worker's session. */
  const send = <T>(session: string, method: string, params: Record<string, unknown>) =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      const key = `${session}:${id}`;
      pending.set(key, (reply) => {
        pending.delete(key);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result as T);
      });
      const command = { id, method, params };
      ws.send(JSON.stringify(session ? { id: ++next, method: 'NodeWorker.sendMessageToWorker', params: { sessionId: session, message: JSON.stringify(command) } } : command));
    });
  await send('', 'NodeWorker.enable', { waitForDebuggerOnStart: false });
  return {
    call: <T>(method: string, params: Record<string, unknown> = {}) => send<T>('', method, params),
    callWorkers: <T>(method: string, params: Record<string, unknown> = {}) => Promise.all([...workers].map((session) => send<T>(session, method, params))),
    close: () => ws.close(),
  };
}
