/** A WebSocket client for tests: real sockets (the `ws` package), messages as a queue. */
import WebSocket from 'ws';

export interface Refusal {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface StreamClient {
  ws: WebSocket;
  /** Every message received so far, parsed. */
  received: any[];
  /** The next message not yet taken (of this type, when given; others before it are skipped). */
  next(type?: string, timeoutMs?: number): Promise<any>;
  /** Messages that arrive within `ms`, taken. */
  drain(ms: number): Promise<any[]>;
  send(message: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a stream; rejects with the HTTP refusal when the upgrade is answered without one. */
export function openStream(url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const received: any[] = [];
    let taken = 0;
    let wake: (() => void) | null = null;
    ws.on('message', (data) => {
      received.push(JSON.parse(data.toString()));
      wake?.();
    });
    // Before open: the upgrade failed. After: a frame the client refused (told in `closedWith`).
    let opened = false;
    let errorAfterOpen = '';
    ws.on('error', (err) => (opened ? (errorAfterOpen = ` after error: ${err.message}`) : reject(err)));
    let closedWith = '';
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on('close', (code, reason) => {
        closedWith = ` (closed: ${code} ${reason.toString()}${errorAfterOpen})`;
        r({ code, reason: reason.toString() });
        wake?.();
      }),
    );
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { refusal: { status: res.statusCode!, headers: res.headers, body: JSON.parse(body || 'null') } })));
    });
    const waitFor = async (pred: () => boolean, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!pred()) {
        const left = deadline - Date.now();
        if (left <= 0) return false;
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          wake = () => (clearTimeout(t), r());
        });
        wake = null;
      }
      return true;
    };
    ws.on('open', () => {
      opened = true;
      resolve({
        ws,
        received,
        closed,
        send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
        async next(type, timeoutMs = 5000) {
          for (;;) {
            const ok = await waitFor(() => taken < received.length || ws.readyState === WebSocket.CLOSED, timeoutMs);
            if (!ok || taken >= received.length) throw new Error(`no ${type ?? ''} message within ${timeoutMs} ms${closedWith}; got ${JSON.stringify(received.slice(-3))}`);
            const m = received[taken++];
            if (type === undefined || m.type === type) return m;
          }
        },
        async drain(ms) {
          await new Promise((r) => setTimeout(r, ms));
          const out = received.slice(taken);
          taken = received.length;
          return out;
        },
      });
    });
  });
}

/** The HTTP answer to an upgrade that is refused. */
export async function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<Refusal> {
  try {
    const c = await openStream(url, headers);
    c.ws.close();
  } catch (err) {
    const refusal = (err as { refusal?: Refusal }).refusal;
    if (refusal) return refusal;
    throw err;
  }
  throw new Error('the upgrade was accepted');
}
