/**
 * The page a person sees at `/` in a browser (API clients keep the JSON index). Built once
 * at start from the catalogue, served from memory, no external assets, with a strict
 * Content-Security-Policy whose script and style hashes are computed here.
 *
 * Everything about the wires (routes, filters, prices, previews, freshness, sources) comes
 * from the catalogue module; every value inserted into the HTML is escaped. The browser
 * script (`homeScript`, below) is type-checked with the rest of the project, serialised with
 * `Function.prototype.toString` and given the catalogue as a JSON argument; it builds its DOM
 * with createElement and textContent only.
 */
import { createHash } from 'node:crypto';
import { filtersOf, PAID_ROUTES, scheduleText, SOURCES, WIRES, wireSchedule, type QueryKind, type RouteDef, type Tier, type WireDef } from '../catalog/index.js';

export interface HomePage {
  html: string;
  /** The Content-Security-Policy header value for it. */
  csp: string;
}

/** What the browser script gets: the catalogue, reduced to what the page shows. */
interface PageWire {
  id: string;
  title: string;
  tier: Tier;
  retention: string;
  /** The retention for people: "72 h", "30 days". */
  keeps: string;
  preview: string;
  q: QueryKind;
  qRequired: boolean;
  filter: string;
  values: readonly string[];
  /** [source id, display name, filter value] */
  sources: [string, string, string][];
}
interface PageData {
  wires: PageWire[];
  /** Milliseconds between two /health reads. */
  refreshMs: number;
}

const HEALTH_REFRESH_MS = 15_000;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** HTML-escapes text for element content and quoted attribute values. */
function esc(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** JSON safe to place inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

function usd(price: string): string {
  return `$${price}`;
}

function duration(text: string): string {
  const n = text.slice(0, -1);
  const unit = ({ m: 'min', h: 'h', d: 'days' } as const)[text.slice(-1) as 'm' | 'h' | 'd'];
  return `${n} ${n === '1' && unit === 'days' ? 'day' : unit}`;
}

function qNote(r: RouteDef): string {
  if (r.q === 'none') return 'no q';
  if (r.q === 'state') return 'q = US state code';
  return r.qRequired ? 'q required' : '';
}

// ---------------------------------------------------------------------------------------
// Sections rendered on the server

function catalogueRows(breaking: PollRange): string {
  return WIRES.map((w) => {
    const routes = w.paid
      .map((r) => {
        const note = qNote(r);
        return `<div class="rt"><code>${esc(r.path)}</code>${note ? ` <span class="note">${esc(note)}</span>` : ''}</div>`;
      })
      .join('');
    const prices = w.paid.map((r) => `<div class="rt price">${esc(usd(r.price!))}</div>`).join('');
    const values = w.filter.values.map((v) => `<li>${esc(v)}</li>`).join('');
    const pnote = qNote(w.preview);
    return (
      `<tr data-wire="${esc(w.id)}"><td><b>${esc(w.title)}</b><span class="wid">${esc(w.id)}</span><small class="desc">${esc(w.description)}</small></td>` +
      `<td>${routes}</td>` +
      `<td><code class="fname">${esc(w.filter.name)}</code><ul class="chips">${values}</ul></td>` +
      `<td>${prices}</td>` +
      `<td><a href="${esc(w.preview.path)}" data-try="${esc(w.id)}"><code>${esc(w.preview.path)}</code></a>${pnote ? ` <span class="note">${esc(pnote)}</span>` : ''}</td>` +
      `<td><span class="tier t-${esc(w.tier)}">${esc(w.tier)}</span><small class="fr">${esc(scheduleText(wireSchedule(w, breaking)))}<br>keeps ${esc(duration(w.retention))}</small></td></tr>`
    );
  }).join('\n');
}

function wireOptions(selected: string): string {
  return WIRES.map((w) => `<option value="${esc(w.id)}"${w.id === selected ? ' selected' : ''}>${esc(w.title)} (${esc(w.id)})</option>`).join('');
}

interface Snippet {
  id: string;
  title: string;
  note: string;
  code: string;
}

function snippets(base: string): Snippet[] {
  // Examples are picked from the catalogue: a wire whose preview needs no q, one that does.
  const plain = WIRES.find((w) => w.id === 'cve' && !w.preview.qRequired) ?? WIRES.find((w) => !w.preview.qRequired) ?? WIRES[0]!;
  const paidEx = WIRES.find((w) => w.id === 'edgar' && !w.paid[0]!.qRequired) ?? plain;
  const withQ = WIRES.find((w) => w.preview.qRequired && w.preview.q === 'text');
  const param = (w: WireDef) => `${w.filter.name}=${w.filter.values[0]!}`;
  const maxPrice = PAID_ROUTES.map((r) => r.def.price!).sort((a, b) => Number(b) - Number(a))[0]!;
  const curl = [
    '# Free top-3 preview',
    `curl '${base}${plain.preview.path}?${param(plain)}'`,
    ...(withQ ? [`curl '${base}${withQ.preview.path}?q=rate+cut&${param(withQ)}'`] : []),
    '',
    '# A paid route without payment: 402 and the x402 offer in PAYMENT-REQUIRED',
    `curl -i '${base}${paidEx.paid[0]!.path}?${param(paidEx)}'`,
  ].join('\n');
  const client = [
    "import { WiresClient } from '@wires-service/client';",
    '',
    'const client = new WiresClient({',
    `  url: '${base}',`,
    '  privateKey: process.env.WALLET_PRIVATE_KEY, // without it: previews only',
    `  maxPricePerCallUsd: ${maxPrice},`,
    '  maxSpendUsd: 1,',
    '});',
    `const { envelope, paidUsd } = await client.wire('${plain.id}', { ${plain.filter.name}: '${plain.filter.values[0]!}', since: '6h' });`,
    ...(withQ ? [`const preview = await client.wire('${withQ.id}', { q: 'rate cut' }, { preview: true });`] : []),
  ].join('\n');
  const x402 = [
    "import { x402Client } from '@x402/core/client';",
    "import { ExactEvmScheme } from '@x402/evm/exact/client';",
    "import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';",
    "import { wrapFetchWithPayment } from '@x402/fetch';",
    "import { privateKeyToAccount } from 'viem/accounts';",
    '',
    '// A payment-identifier id on each payment: a resend after a lost answer is served and charged once.',
    "const paymentIdentifier = { key: 'payment-identifier', enrichPaymentPayload: async (p) => ({ ...p, extensions: appendPaymentIdentifierToExtensions(structuredClone(p.extensions ?? {})) }) };",
    "const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(KEY))).registerExtension(paymentIdentifier);",
    'const pay = wrapFetchWithPayment(fetch, client);',
    `const res = await pay('${base}${paidEx.paid[0]!.path}?${param(paidEx)}');`,
    'console.log(await res.json());',
  ].join('\n');
  const remote = JSON.stringify({ mcpServers: { wires: { type: 'http', url: `${base}/mcp` } } }, null, 2);
  const stdio = JSON.stringify(
    {
      mcpServers: {
        wires: {
          command: 'node',
          args: ['/path/to/checkout/dist/src/client/mcp-stdio.js'],
          env: { WIRES_URL: base, WALLET_PRIVATE_KEY: '0x…', MAX_PRICE_PER_CALL_USD: maxPrice, MAX_SPEND_USD: '1' },
        },
      },
    },
    null,
    2,
  ).replace(/\[\n\s*("[^"\n]*")\n\s*\]/, '[$1]');
  return [
    { id: 'curl', title: 'curl', note: 'A free preview, and the 402 a paid route answers without payment.', code: curl },
    {
      id: 'client',
      title: 'TypeScript client',
      note: 'Typed wires and filters, price and spend limits. Pack it from a checkout (npm pack) and npm install the tarball.',
      code: client,
    },
    { id: 'x402', title: 'Paying with @x402/fetch', note: 'The official x402 client works unchanged.', code: x402 },
    { id: 'mcp-remote', title: 'MCP, remote endpoint', note: 'Streamable HTTP; preview tools are free, paid tools take an x402 payment.', code: remote },
    {
      id: 'mcp-stdio',
      title: 'MCP, local server that pays',
      note: 'A stdio server that signs payments from a wallet within your limits (build the checkout first).',
      code: stdio,
    },
  ];
}

/** One panel per snippet; the script turns them into tabs (without it they are all shown). */
function snippetBlocks(base: string): string {
  return snippets(base)
    .map((s) => `<article class="snip" id="snip-${esc(s.id)}"><h3>${esc(s.title)}</h3><p class="muted">${esc(s.note)}</p>` + `<pre data-copy><code>${esc(s.code)}</code></pre></article>`)
    .join('\n');
}

// ---------------------------------------------------------------------------------------
// The browser script. Self-contained: it is serialised with toString() and runs in the page.

function homeScript(data: PageData): void {
  const $ = (id: string): HTMLElement => document.getElementById(id)!;
  function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const byId = new Map(data.wires.map((w) => [w.id, w]));
  const span = (seconds: number): string => {
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return s + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' min';
    const h = Math.floor(m / 60);
    if (h < 48) return h + ' h';
    return Math.floor(h / 24) + ' d';
  };
  const ago = (iso: string | null): string => (iso ? span((Date.now() - Date.parse(iso)) / 1000) + ' ago' : 'never');
  const minutesAgo = (m: number): string => (m < 1 ? 'just now' : span(m * 60) + ' ago');
  const safeUrl = (u: unknown): string | null => (typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null);
  const getJson = async (url: string): Promise<{ status: number; body: any }> => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 10_000);
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store', signal: ctl.signal });
      return { status: res.status, body: await res.json() };
    } finally {
      clearTimeout(timer);
    }
  };

  // ---- "Try the preview" form
  const form = $('try-form') as HTMLFormElement;
  const wireSel = $('f-wire') as HTMLSelectElement;
  const q = $('f-q') as HTMLInputElement;
  const qLabel = $('f-q-label');
  const filterSel = $('f-filter') as HTMLSelectElement;
  const filterLabel = $('f-filter-label');
  const since = $('f-since') as HTMLInputElement;
  const out = $('try-out');
  const reqLine = $('try-req');
  const reqLink = $('try-link') as HTMLAnchorElement;
  const meta = $('try-meta');
  const button = $('f-go') as HTMLButtonElement;

  function syncWire(): void {
    const w = byId.get(wireSel.value) ?? data.wires[0]!;
    form.action = w.preview;
    filterLabel.textContent = w.filter;
    filterSel.name = w.filter;
    filterSel.replaceChildren(new Option('any', ''), ...w.values.map((v) => new Option(v, v)));
    q.disabled = w.q === 'none';
    qLabel.textContent = w.q === 'state' ? 'State code (q)' : 'Search terms (q)';
    qLabel.classList.toggle('need', w.qRequired);
    q.placeholder = w.q === 'state' ? 'optional, e.g. TX' : w.qRequired ? 'required, e.g. rate cut' : 'optional';
    since.placeholder = 'default ' + w.retention;
  }

  function showError(status: number, err: { code?: unknown; message?: unknown; param?: unknown; allowed?: unknown } | undefined): void {
    const box = el('div', 'err');
    box.setAttribute('role', 'alert');
    const head = el('div', 'err-h');
    head.append(el('span', 'badge bad', status ? String(status) : 'error'), el('code', '', String(err?.code ?? 'error')));
    if (typeof err?.param === 'string') head.append(el('span', 'muted', 'param ' + err.param));
    box.append(head, el('p', 'err-msg', String(err?.message ?? 'Unexpected answer')));
    if (Array.isArray(err?.allowed)) {
      const chips = el('div', 'chips');
      chips.append(el('span', 'muted', 'allowed: '));
      for (const v of err.allowed) chips.append(el('span', 'chip', String(v)));
      box.append(chips);
    }
    out.replaceChildren(box);
  }

  function showResults(body: any): void {
    const items: any[] = Array.isArray(body?.articles) ? body.articles : [];
    if (items.length === 0) {
      out.replaceChildren(el('p', 'empty', 'Nothing matched. Try another filter value, other terms or a wider since.'));
      return;
    }
    const list = el('ol', 'results');
    for (const a of items) {
      const li = el('li', 'item');
      const href = safeUrl(a.url);
      const title = href ? el('a', 'title', String(a.title ?? '')) : el('span', 'title', String(a.title ?? ''));
      if (title instanceof HTMLAnchorElement && href) {
        title.href = href;
        title.target = '_blank';
        title.rel = 'noopener noreferrer';
      }
      li.append(title);
      if (typeof a.summary === 'string' && a.summary) li.append(el('p', 'sum', a.summary));
      const m = el('div', 'meta');
      const when = el('time', 'age', typeof a.age_minutes === 'number' ? minutesAgo(a.age_minutes) : '');
      if (typeof a.published === 'string') {
        when.dateTime = a.published;
        when.title = a.published;
      }
      m.append(el('span', 'src', String(a.source ?? '')), when, el('span', 'chip', String(a.category ?? '')));
      li.append(m);
      list.append(li);
    }
    out.replaceChildren(list);
  }

  let seq = 0;
  async function run(): Promise<void> {
    const w = byId.get(wireSel.value) ?? data.wires[0]!;
    const p = new URLSearchParams();
    if (!q.disabled && q.value.trim()) p.set('q', q.value.trim());
    if (filterSel.value) p.set(w.filter, filterSel.value);
    if (since.value.trim()) p.set('since', since.value.trim());
    const qs = p.toString();
    const url = w.preview + (qs ? '?' + qs : '');
    const mine = ++seq;
    reqLine.textContent = 'GET ' + url;
    reqLink.href = url;
    meta.textContent = 'loading…';
    button.disabled = true;
    try {
      const { status, body } = await getJson(url);
      if (mine !== seq) return;
      if (status >= 400 || body?.error) {
        meta.textContent = String(status);
        showError(status, body?.error);
      } else {
        meta.textContent = status + ' · ' + body.count + (body.count === 1 ? ' result' : ' results') + ' · ' + body.took_ms + ' ms · since ' + body.since;
        showResults(body);
      }
    } catch (e) {
      if (mine !== seq) return;
      meta.textContent = 'failed';
      showError(0, { code: 'network_error', message: (e as Error)?.name === 'AbortError' ? 'No answer within 10 s' : String((e as Error)?.message ?? e) });
    } finally {
      if (mine === seq) button.disabled = false;
    }
  }

  wireSel.addEventListener('change', () => {
    syncWire();
    const w = byId.get(wireSel.value);
    if (w && !w.qRequired) void run();
    else out.replaceChildren(el('p', 'empty', 'This wire needs search terms: type some and run the preview.'));
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run();
  });
  for (const a of Array.from(document.querySelectorAll<HTMLAnchorElement>('a[data-try]'))) {
    a.addEventListener('click', (ev) => {
      const id = a.dataset.try!;
      if (!byId.has(id)) return;
      ev.preventDefault();
      wireSel.value = id;
      q.value = '';
      since.value = '';
      syncWire();
      $('try').scrollIntoView({ behavior: 'smooth', block: 'start' });
      if (byId.get(id)!.qRequired) {
        out.replaceChildren(el('p', 'empty', 'This wire needs search terms: type some and run the preview.'));
        q.focus({ preventScroll: true });
      } else void run();
    });
  }
  syncWire();
  if (!byId.get(wireSel.value)?.qRequired) void run();

  // ---- Live freshness dashboard, from GET /health
  interface Card {
    dot: HTMLElement;
    age: HTMLElement;
    items: HTMLElement;
    summary: HTMLElement;
    rows: Map<string, { dot: HTMLElement; state: HTMLElement; poll: HTMLElement }>;
  }
  const cards = new Map<string, Card>();
  const grid = $('fresh-grid');
  grid.replaceChildren();
  for (const w of data.wires) {
    const card = el('article', 'card');
    card.dataset.wire = w.id;
    const h = el('header', 'card-h');
    const dot = el('span', 'dot');
    h.append(dot, el('b', '', w.title), el('code', 'wid', w.id));
    const ageLine = el('div', 'age-line');
    const age = el('span', 'age-big', '…');
    ageLine.append(el('span', 'cap', 'Newest item'), age);
    const items = el('div', 'muted small', '');
    const details = el('details', 'srcs');
    const summary = el('summary', '', w.sources.length + ' sources');
    const list = el('ul', 'src-list');
    const rows = new Map<string, { dot: HTMLElement; state: HTMLElement; poll: HTMLElement }>();
    for (const [id, name, filter] of w.sources) {
      const li = el('li');
      li.dataset.source = id;
      const sdot = el('span', 'dot');
      const label = el('span', 'src-name', name);
      label.title = id;
      const f = el('span', 'chip', filter);
      const state = el('span', 'src-state', '…');
      const poll = el('span', 'src-poll muted', '');
      li.append(sdot, label, f, state, poll);
      list.append(li);
      rows.set(id, { dot: sdot, state, poll });
    }
    details.append(summary, list);
    card.append(h, ageLine, items, details);
    grid.append(card);
    cards.set(w.id, { dot, age, items, summary, rows });
  }

  const svc = $('svc-status');
  const svcText = $('svc-text');
  const updated = $('fresh-updated');
  const note = $('fresh-note');
  const setDot = (d: HTMLElement, state: string) => {
    d.className = 'dot ' + state;
  };

  function render(h: any): void {
    const status = String(h?.status ?? 'unknown');
    svc.className = 'pill ' + (status === 'ok' ? 'ok' : status === 'down' ? 'bad' : 'warn');
    svcText.textContent = status;
    const detail: any[] = Array.isArray(h?.sources?.detail) ? h.sources.detail : [];
    const byIdState = new Map(detail.map((s) => [String(s.id), s]));
    note.textContent =
      detail.length === 0
        ? 'This instance does not poll its sources (ingestion off): it serves what its snapshot holds.'
        : detail.length + ' sources polled, ' + (h.sources.failing ?? 0) + ' failing. Last poll run ' + ago(h.last_poll ?? null) + '.';
    for (const w of data.wires) {
      const c = cards.get(w.id)!;
      const wire = h?.wires?.[w.id];
      const newest: string | null = wire?.newest ?? null;
      c.age.textContent = newest ? ago(newest) : 'empty';
      c.age.title = newest ?? 'no items';
      c.items.textContent = (wire?.items ?? 0) + ' items · ' + w.tier + ' · keeps ' + w.keeps;
      let ok = 0;
      let failing = 0;
      for (const [id] of w.sources) {
        const row = c.rows.get(id)!;
        const s = byIdState.get(id);
        if (!s) {
          setDot(row.dot, 'idle');
          row.state.textContent = 'not polled';
          row.poll.textContent = '';
          continue;
        }
        row.poll.textContent = s.last_attempt ? 'polled ' + ago(s.last_attempt) : 'waiting';
        if (s.consecutive_failures > 0) {
          failing++;
          setDot(row.dot, 'bad');
          row.state.textContent = 'failing ×' + s.consecutive_failures + (s.last_error?.code ? ' (' + s.last_error.code + ')' : '');
          row.state.title = String(s.last_error?.message ?? '');
        } else if (s.last_success) {
          ok++;
          setDot(row.dot, 'ok');
          row.state.textContent = 'ok · ' + s.items + ' items';
          row.state.title = 'last success ' + s.last_success;
        } else {
          setDot(row.dot, 'idle');
          row.state.textContent = 'not polled yet';
        }
      }
      const polled = ok + failing;
      setDot(c.dot, polled === 0 ? 'idle' : failing === 0 ? 'ok' : ok === 0 ? 'bad' : 'warn');
      c.summary.textContent = w.sources.length + (w.sources.length === 1 ? ' source' : ' sources') + (polled ? ' · ' + ok + ' ok' + (failing ? ' · ' + failing + ' failing' : '') : '');
    }
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  async function refresh(): Promise<void> {
    clearTimeout(timer);
    try {
      const { status, body } = await getJson('/health');
      if (status !== 200) throw new Error('HTTP ' + status);
      render(body);
      updated.textContent = 'Updated ' + new Date().toLocaleTimeString() + ' · every ' + Math.round(data.refreshMs / 1000) + ' s';
      updated.classList.remove('stale');
    } catch (e) {
      updated.textContent = 'Could not read /health: ' + String((e as Error)?.message ?? e) + ' · retrying';
      updated.classList.add('stale');
    }
    timer = setTimeout(() => void (document.hidden ? undefined : refresh()), data.refreshMs);
  }
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) void refresh();
  });
  void refresh();

  // ---- Snippets: tabs, and a copy button on each
  const panels = Array.from(document.querySelectorAll<HTMLElement>('#snips .snip'));
  const tabs = el('div', 'tabs');
  tabs.setAttribute('role', 'tablist');
  const select = (i: number) =>
    panels.forEach((p, j) => {
      p.hidden = i !== j;
      tabs.children[j]!.setAttribute('aria-selected', String(i === j));
    });
  panels.forEach((p, i) => {
    const t = el('button', 'tab', p.querySelector('h3')?.textContent ?? '');
    t.type = 'button';
    t.setAttribute('role', 'tab');
    t.dataset.tab = p.id;
    t.addEventListener('click', () => select(i));
    tabs.append(t);
  });
  if (panels.length) {
    $('snips').prepend(tabs);
    $('snips').classList.add('tabbed');
    select(0);
  }
  for (const pre of Array.from(document.querySelectorAll<HTMLElement>('pre[data-copy]'))) {
    const b = el('button', 'copy', 'Copy');
    b.type = 'button';
    b.setAttribute('aria-label', 'Copy to clipboard');
    b.addEventListener('click', () => {
      const text = pre.textContent ?? '';
      const done = (label: string) => {
        b.textContent = label;
        setTimeout(() => (b.textContent = 'Copy'), 1500);
      };
      const select = () => {
        const range = document.createRange();
        range.selectNodeContents(pre);
        const sel = window.getSelection();
        sel?.removeAllRanges();
        sel?.addRange(range);
        done('Press Ctrl+C');
      };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => done('Copied'), select);
      else select();
    });
    pre.before(b);
  }
}

// ---------------------------------------------------------------------------------------

const STYLE = `
:root{--bg:#f6f7f9;--fg:#141a23;--muted:#5d6675;--line:#e2e6ec;--card:#fff;--soft:#eef1f5;--accent:#1f5ad6;--accent-fg:#fff;
--ok:#16a05d;--warn:#d08b00;--bad:#d63a3a;--idle:#aab2bf;--code:#0f1620;--code-fg:#dce3ec;--r:12px;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0c1016;--fg:#e5ebf2;--muted:#93a0b1;--line:#232b37;--card:#121821;--soft:#1a2230;
--accent:#6fa4ff;--accent-fg:#0c1016;--idle:#4b5564;--code:#0a0e14}}
*{box-sizing:border-box}[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%;scroll-behavior:smooth}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre{font-family:var(--mono)}
code{font-size:.88em}
.wrap{max-width:1160px;margin:0 auto;padding:0 20px}
.top{position:sticky;top:0;z-index:5;background:color-mix(in srgb,var(--bg) 88%,transparent);backdrop-filter:blur(8px);border-bottom:1px solid var(--line)}
.top .wrap{display:flex;align-items:center;gap:20px;height:56px}
.brand{display:flex;align-items:center;gap:9px;font-weight:700;font-size:18px;color:var(--fg);letter-spacing:-.01em}
.brand:hover{text-decoration:none}
.logo{width:26px;height:26px;border-radius:7px;background:var(--accent);display:grid;place-items:center}
.logo i{display:block;width:14px;height:3px;border-radius:2px;background:var(--accent-fg);box-shadow:0 -5px 0 var(--accent-fg),0 5px 0 var(--accent-fg)}
nav{display:flex;gap:18px;overflow-x:auto;white-space:nowrap;scrollbar-width:none;margin-left:auto}
nav a{color:var(--muted);font-size:14px;font-weight:500}nav a:hover{color:var(--fg);text-decoration:none}
.hero{padding:52px 0 28px;display:grid;grid-template-columns:minmax(0,1fr) 340px;gap:40px;align-items:center}
.how{padding:20px 22px}.how ol{margin:12px 0 10px;padding:0;list-style:none;counter-reset:s;display:grid;gap:12px}
.how li{position:relative;padding-left:36px;font-size:14px;color:var(--muted)}.how li b{color:var(--fg)}
.how li::before{counter-increment:s;content:counter(s);position:absolute;left:0;top:0;width:24px;height:24px;border-radius:50%;background:var(--soft);color:var(--accent);font-weight:700;font-size:13px;display:grid;place-items:center}
.how p{margin:0}
.kicker{display:inline-flex;align-items:center;gap:8px;font-size:13px;font-weight:600;color:var(--muted);background:var(--card);border:1px solid var(--line);border-radius:99px;padding:4px 12px 4px 8px}
h1{font-size:clamp(30px,5vw,48px);line-height:1.1;letter-spacing:-.025em;margin:18px 0 14px;max-width:820px}
.lead{font-size:clamp(16px,2vw,18px);color:var(--muted);max-width:760px;margin:0 0 24px}
.stats{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:12px;max-width:760px;margin:0 0 26px}
.stat{background:var(--card);border:1px solid var(--line);border-radius:var(--r);padding:12px 14px}
.stat b{display:block;font-size:22px;letter-spacing:-.02em;white-space:nowrap}.stat span{color:var(--muted);font-size:13px}
.cta{display:flex;gap:10px;flex-wrap:wrap}
.btn{display:inline-flex;align-items:center;justify-content:center;height:42px;padding:0 18px;border-radius:10px;font-weight:600;font-size:15px;background:var(--accent);color:var(--accent-fg);border:1px solid var(--accent);cursor:pointer}
.btn:hover{text-decoration:none;filter:brightness(1.08)}
.btn.ghost{background:transparent;color:var(--fg);border-color:var(--line)}
.btn:disabled{opacity:.6;cursor:progress}
section{padding:34px 0}
.sh{display:flex;align-items:end;justify-content:space-between;gap:16px;flex-wrap:wrap;margin-bottom:16px}
h2{font-size:24px;letter-spacing:-.015em;margin:0 0 4px}
.sh p{margin:0;color:var(--muted);max-width:720px}
h3{font-size:16px;margin:0}
.panel{background:var(--card);border:1px solid var(--line);border-radius:var(--r)}
.muted{color:var(--muted)}.small{font-size:13px}
.chip,.chips li{display:inline-block;font-family:var(--mono);font-size:12px;line-height:1.5;padding:0 7px;border-radius:6px;background:var(--soft);color:var(--fg);white-space:nowrap}
.chips{display:flex;flex-wrap:wrap;gap:4px;margin:6px 0 0;padding:0;list-style:none}
.note{font-size:12px;color:var(--muted);white-space:nowrap}
/* try */
.try{display:grid;grid-template-columns:2fr 1.6fr 1fr .8fr auto;gap:12px;align-items:end;padding:18px}
label{display:flex;flex-direction:column;gap:6px;font-size:13px;font-weight:600;color:var(--muted);min-width:0}
label .need::after{content:" *";color:var(--bad)}
input,select{font:inherit;font-size:15px;font-weight:400;height:42px;padding:0 12px;border:1px solid var(--line);border-radius:10px;background:var(--bg);color:var(--fg);width:100%;min-width:0}
input:focus,select:focus,.btn:focus-visible,.copy:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
input:disabled{opacity:.5}
.req{display:flex;align-items:center;gap:10px;flex-wrap:wrap;padding:12px 18px;border-top:1px solid var(--line);font-size:13px}
.req code{background:var(--soft);padding:3px 8px;border-radius:6px;word-break:break-all}
.req .sp{flex:1}
#try-out{padding:6px 18px 18px;min-height:72px}
.results{list-style:none;margin:0;padding:0}
.item{padding:14px 0;border-bottom:1px solid var(--line)}.item:last-child{border-bottom:0}
.item .title{font-weight:600;font-size:16px;line-height:1.35;color:var(--fg)}
.item a.title:hover{color:var(--accent)}
.sum{margin:4px 0 0;color:var(--muted);font-size:14px;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}
.meta{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin-top:6px;font-size:13px;color:var(--muted)}
.meta .src{font-weight:600;color:var(--fg)}
.empty{color:var(--muted);margin:14px 0 0}
.err{margin-top:12px;border:1px solid color-mix(in srgb,var(--bad) 45%,var(--line));background:color-mix(in srgb,var(--bad) 7%,var(--card));border-radius:10px;padding:12px 14px}
.err-h{display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.err-msg{margin:6px 0 0;font-weight:500}
.badge{font:600 12px/1.6 var(--mono);padding:0 7px;border-radius:6px;color:#fff}.badge.bad{background:var(--bad)}
/* catalogue */
.tbl{overflow:hidden}
table{width:100%;border-collapse:collapse;font-size:14px}
th{white-space:nowrap;text-align:left;font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600;padding:12px 14px;border-bottom:1px solid var(--line);background:var(--soft)}
td{padding:14px;border-bottom:1px solid var(--line);vertical-align:top}
tr:last-child td{border-bottom:0}
td b{display:block}td:first-child{width:25%}td:nth-child(3){width:28%}td:nth-child(6){white-space:nowrap}
.wid{font-family:var(--mono);font-size:12px;color:var(--muted)}
.desc{display:block;color:var(--muted);font-size:12.5px;margin-top:4px}
.rt{white-space:nowrap;line-height:1.9}
.price{font-weight:700;font-variant-numeric:tabular-nums}
.fname{font-weight:600}
.tier{display:inline-block;font-size:12px;font-weight:600;padding:0 8px;border-radius:99px;border:1px solid var(--line)}
.t-breaking{color:var(--bad)}.t-timely{color:var(--warn)}.t-sparse{color:var(--muted)}
.fr{display:block;color:var(--muted);font-size:12.5px;margin-top:4px}
/* freshness */
.pill{display:inline-flex;align-items:center;gap:7px;font-size:13px;font-weight:600;padding:4px 12px;border-radius:99px;border:1px solid var(--line);background:var(--card)}
.pill::before{content:"";width:8px;height:8px;border-radius:50%;background:var(--idle)}
.pill.ok::before{background:var(--ok)}.pill.warn::before{background:var(--warn)}.pill.bad::before{background:var(--bad)}
.fresh-bar{display:flex;gap:12px;align-items:center;flex-wrap:wrap;margin-bottom:14px;font-size:13px;color:var(--muted)}
.stale{color:var(--bad)}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:12px;align-items:start}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--r);padding:14px 16px}
.card-h{display:flex;align-items:center;gap:8px}
.card-h{align-items:flex-start}.card-h .dot{margin-top:6px}.card-h .wid{margin-top:2px}.card-h b{flex:1;min-width:0;line-height:1.3}
.dot{flex:none;width:9px;height:9px;border-radius:50%;background:var(--idle)}
.dot.ok{background:var(--ok)}.dot.warn{background:var(--warn)}.dot.bad{background:var(--bad)}
.age-line{margin:10px 0 2px}.cap{display:block;font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600}
.age-big{font-size:24px;font-weight:700;letter-spacing:-.02em;font-variant-numeric:tabular-nums}
.srcs{margin-top:8px;border-top:1px solid var(--line);padding-top:8px;font-size:13px}
.srcs summary{cursor:pointer;color:var(--muted)}
.src-list{list-style:none;margin:8px 0 0;padding:0;display:grid;gap:6px}
.src-list li{display:grid;grid-template-columns:auto 1fr auto;gap:2px 8px;align-items:center}
.src-list .chip{justify-self:end}.src-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.src-state,.src-poll{font-size:12px;margin-top:-2px}.src-state{grid-column:2}.src-poll{grid-column:3;text-align:right;white-space:nowrap}
/* snippets */
.snips{overflow:hidden}
.tabs{display:flex;gap:4px;padding:8px 10px 0;border-bottom:1px solid var(--line);overflow-x:auto;scrollbar-width:none;background:var(--soft)}
.tab{font:600 14px system-ui,sans-serif;color:var(--muted);background:none;border:0;border-bottom:2px solid transparent;padding:9px 12px 10px;cursor:pointer;white-space:nowrap}
.tab:hover{color:var(--fg)}.tab[aria-selected=true]{color:var(--accent);border-bottom-color:var(--accent)}
.snip{display:grid;grid-template-columns:minmax(0,1fr) auto;align-items:center;gap:0 12px;padding:14px 16px 16px;border-top:1px solid var(--line)}
.snip:first-child,.tabs+.snip{border-top:0}
.snip h3{grid-column:1/-1;margin-bottom:2px}.tabbed .snip h3{display:none}
.snip p{margin:0;font-size:14px}
.snip pre{grid-column:1/-1;margin:12px 0 0;padding:16px;border-radius:10px;background:var(--code);color:var(--code-fg);font-size:13px;line-height:1.6;overflow-x:auto;tab-size:2}
.copy{font:600 13px system-ui,sans-serif;padding:6px 12px;border-radius:8px;border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer}
.copy:hover{border-color:var(--accent);color:var(--accent)}
.docs{display:flex;flex-wrap:wrap;gap:8px}
.docs a{display:inline-flex;flex-direction:column;padding:10px 14px;border:1px solid var(--line);border-radius:10px;background:var(--card);color:var(--fg);min-width:150px}
.docs a:hover{border-color:var(--accent);text-decoration:none}.docs small{color:var(--muted)}
footer{border-top:1px solid var(--line);padding:22px 0 40px;color:var(--muted);font-size:13px;margin-top:20px}
@media (max-width:900px){.try{grid-template-columns:1fr 1fr}.try .btn{grid-column:1/-1}.hero{grid-template-columns:1fr;gap:24px}}
@media (max-width:760px){
.hero{padding:32px 0 12px}.stats{grid-template-columns:repeat(2,minmax(0,1fr))}.stat b{font-size:19px}
nav a.opt{display:none}
.tbl{background:transparent;border:0}
table,tbody,tr,td{display:block}thead{display:none}
tr{background:var(--card);border:1px solid var(--line);border-radius:var(--r);margin-bottom:10px;padding:4px 0}
td{border:0;padding:7px 14px 7px 124px;position:relative;width:auto!important}
td::before{position:absolute;left:14px;top:10px;font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600;padding-top:3px}
td:nth-child(2)::before{content:"Paid route"}td:nth-child(3)::before{content:"Filter"}td:nth-child(4)::before{content:"USD per call"}
td:nth-child(5)::before{content:"Free preview"}td:nth-child(6)::before{content:"Freshness"}
td:first-child{border-bottom:1px solid var(--line);padding:12px 14px;margin-bottom:4px}td:first-child::before{content:none}
td .chips{margin-top:4px}.rt{line-height:1.7}
}
@media (max-width:420px){.try{grid-template-columns:1fr}.wrap{padding:0 14px}}
`;

const FAVICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#1f5ad6"/>' +
      '<path d="M8 10h16M8 16h16M8 22h16" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>',
  );

/** The breaking tier's poll range, as configured (POLL_FLOOR_SEC, POLL_INTERVAL_SEC). */
type PollRange = { floorSec: number; ceilingSec: number };

export function buildHomePage(publicUrl: string, breaking: PollRange): HomePage {
  // A quote would end the single-quoted strings of the shell and TypeScript snippets.
  const base = publicUrl.replace(/\/+$/, '').replace(/'/g, '%27');
  const data: PageData = {
    wires: WIRES.map((w) => ({
      id: w.id,
      title: w.title,
      tier: w.tier,
      retention: w.retention,
      keeps: duration(w.retention),
      preview: w.preview.path,
      q: w.preview.q,
      qRequired: w.preview.qRequired,
      filter: w.filter.name,
      values: w.filter.values,
      sources: w.sources.map((s): [string, string, string] => [s.id, s.name, filtersOf(s).join(', ')]),
    })),
    refreshMs: HEALTH_REFRESH_MS,
  };
  // homeScript holds no multi-line strings, so its lines can be trimmed and comment lines dropped.
  const fn = homeScript
    .toString()
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))
    .join('\n');
  const script = `(${fn})(${scriptJson(data)});`;
  const style = STYLE.trim();
  const prices = [...new Set(PAID_ROUTES.map((r) => r.def.price!))].sort((a, b) => Number(a) - Number(b));
  const priceRange = prices.length > 1 ? `${usd(prices[0]!)}–${prices[prices.length - 1]!}` : usd(prices[0] ?? '0');
  const defaultWire = (WIRES.find((w) => w.id === 'cve' && !w.preview.qRequired) ?? WIRES.find((w) => !w.preview.qRequired) ?? WIRES[0]!).id;
  const docs: [string, string][] = [
    ['/llms-full.txt', 'Every route, for agents'],
    ['/openapi.json', 'OpenAPI 3.0.3'],
    ['/.well-known/x402', 'Prices and exact offers'],
    ['/mcp', 'MCP catalogue'],
    ['/health', 'Service health'],
    ['/sources', 'Every source and its state'],
  ];

  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>wires: real-time data for bots and agents, paid per call</title>
<meta name="description" content="${esc(`${WIRES.length} real-time data wires from ${SOURCES.length} public sources, searchable over HTTP and MCP. ${priceRange} USD per call with x402; free top-3 previews.`)}">
<link rel="icon" href="${esc(FAVICON)}">
<style>${style}</style>
</head>
<body>
<header class="top"><div class="wrap">
<a class="brand" href="/"><span class="logo"><i></i></span>wires</a>
<nav><a href="#try">Try it</a><a href="#catalogue">Catalogue</a><a href="#freshness">Freshness</a><a href="#use">Use it</a><a class="opt" href="#docs">Docs</a></nav>
</div></header>
<main class="wrap">
<section class="hero"><div class="hero-text">
<span class="kicker"><span class="pill" id="svc-status"><span id="svc-text">checking</span></span>${esc(base)}</span>
<h1>Real-time data wires for trading bots and AI agents</h1>
<p class="lead">News, SEC filings, vulnerability advisories, regulations, court opinions, earthquakes, central banks and more: ${esc(WIRES.length)} wires fed by ${esc(SOURCES.length)} public sources, kept in memory and searchable over HTTP. Pay per call with x402 (USDC on Base). No accounts, no API keys: the wallet is the account.</p>
<div class="stats">
<div class="stat"><b>${esc(WIRES.length)}</b><span>wires</span></div>
<div class="stat"><b>${esc(SOURCES.length)}</b><span>public sources</span></div>
<div class="stat"><b>${esc(priceRange)}</b><span>USD per call</span></div>
<div class="stat"><b>Free</b><span>top-3 previews</span></div>
</div>
<p class="cta"><a class="btn" href="#try">Try a free preview</a><a class="btn ghost" href="#use">Get a snippet</a></p>
</div>
<aside class="how panel"><h3>How a paid call works</h3><ol>
<li><b>Call a paid route.</b> Without payment it answers <code>402</code> with an x402 v2 offer: the price, USDC on Base, the payee.</li>
<li><b>Sign the offer</b> with your wallet: a USDC transfer authorization for exactly that price.</li>
<li><b>Repeat the call</b> with the <code>PAYMENT-SIGNATURE</code> header and get the data.</li>
</ol><p class="muted small">Parameters are checked before payment is asked for: a bad query is a <code>400</code>, never a charge.</p></aside>
</section>

<section id="try">
<div class="sh"><div><h2>Try the preview</h2><p>Every wire has a free route returning its top 3 results. This form calls it from your browser, exactly as a client would.</p></div></div>
<div class="panel">
<form id="try-form" class="try" action="${esc(WIRES.find((w) => w.id === defaultWire)!.preview.path)}" method="get">
<label>Wire<select id="f-wire">${wireOptions(defaultWire)}</select></label>
<label><span id="f-q-label">Search terms (q)</span><input id="f-q" name="q" type="search" maxlength="200" autocomplete="off" spellcheck="false"></label>
<label><span id="f-filter-label">Filter</span><select id="f-filter"><option value="">any</option></select></label>
<label>Since<input id="f-since" name="since" autocomplete="off" spellcheck="false" maxlength="8"></label>
<button class="btn" id="f-go" type="submit">Run preview</button>
</form>
<div class="req"><code id="try-req">GET</code><span class="muted" id="try-meta"></span><span class="sp"></span><a id="try-link" href="${esc(WIRES.find((w) => w.id === defaultWire)!.preview.path)}">Raw JSON</a></div>
<div id="try-out" aria-live="polite"><noscript><p class="empty">The form needs JavaScript; the preview routes work from any HTTP client.</p></noscript></div>
</div>
</section>

<section id="catalogue">
<div class="sh"><div><h2>Catalogue</h2><p>Each wire has paid routes, one filter parameter with fixed lowercase values, and a free preview. Every route also takes <code>since</code> (e.g. <code>6h</code>) and <code>limit</code>.</p></div></div>
<div class="panel tbl"><table>
<thead><tr><th>Wire</th><th>Paid route</th><th>Filter</th><th>USD per call</th><th>Free preview</th><th>Freshness</th></tr></thead>
<tbody>
${catalogueRows(breaking)}
</tbody></table></div>
</section>

<section id="freshness">
<div class="sh"><div><h2>Live freshness</h2><p>Age of each wire's newest item and the state of every source, read from <a href="/health"><code>/health</code></a>.</p></div></div>
<div class="fresh-bar"><span id="fresh-updated">Loading…</span><span id="fresh-note"></span></div>
<div class="grid" id="fresh-grid"><p class="muted">Loading…</p></div>
</section>

<section id="use">
<div class="sh"><div><h2>Use it</h2><p>Copy, paste, run. A paid route answers <code>402</code> with an x402 v2 offer; sign it and repeat the call with <code>PAYMENT-SIGNATURE</code>.</p></div></div>
<div class="panel snips" id="snips">
${snippetBlocks(base)}
</div>
</section>

<section id="docs">
<div class="sh"><div><h2>Machine-readable</h2><p>All generated from the same catalogue as this page.</p></div></div>
<div class="docs">${docs.map(([path, label]) => `<a href="${esc(path)}"><code>${esc(path)}</code><small>${esc(label)}</small></a>`).join('')}</div>
</section>
</main>
<footer><div class="wrap">wires · previews are free, paid routes settle in USDC on Base with x402 v2 · ${esc(base)}</div></footer>
<script>${script}</script>
</body>
</html>
`;

  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}
