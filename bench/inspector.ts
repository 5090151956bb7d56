/**
 * A process's V8 inspector, reached over its loopback port (`node --inspect=127.0.0.1:PORT`):
 * the Chrome DevTools Protocol's commands, one call at a time.
 */
import WebSocket from 'ws';

export interface Inspector {
  call<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

export async function connectInspector(port: number): Promise<Inspector> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const pending = new Map<number, (reply: { result?: unknown; error?: { message: string } }) => void>();
  ws.on('message', (data) => {
    const reply = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (reply.id !== undefined) pending.get(reply.id)?.(reply);
  });
  ws.on('close', () => {
    for (const settle of pending.values()) settle({ error: { message: 'inspector closed' } });
  });
  let next = 0;
  return {
    call: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = ++next;
        pending.set(id, (reply) => {
          pending.delete(id);
          if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
          else resolve(reply.result as T);
        });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}
