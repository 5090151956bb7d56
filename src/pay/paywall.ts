/**
 * The page a browser gets from a paid route called without payment. API clients keep the
 * JSON 402; the PAYMENT-REQUIRED header is sent with both.
 *
 * It states the offer, says how to pay it with an x402 client, and pays it from a browser
 * wallet (EIP-1193 `window.ethereum`: MetaMask, Coinbase Wallet, …): the wallet signs the
 * EIP-3009 authorization with `eth_signTypedData_v4`, and the page sends it in
 * PAYMENT-SIGNATURE, as any x402 v2 client would. The official `@x402/paywall` (the x402 wallet-connect paywall)
 * can't be installed in this project: every published version needs `react@^19` as a peer,
 * and our dev tree pins react 18 (x402-axios -> x402 -> wagmi -> valtio ->
 * use-sync-external-store@1.2.0). `@x402/express` also wants `@x402/paywall@^2.27.0`, which
 * isn't published. With `--legacy-peer-deps` npm drops the peer-installed `ai` that x402-mcp
 * needs.
 *
 * The page is self-contained: no external asset; one inline style and one inline script,
 * allowed by their hashes in the Content-Security-Policy (`csp` below, sent as a header and
 * in a `<meta>`), which permits requests to this origin only. The script is a constant: the
 * offer reaches it as a JSON data block. Everything inserted is escaped.
 */
import { createHash } from 'node:crypto';
import type { Offer } from './offer.js';

export interface PaywallPage {
  html: string;
  /** The page's Content-Security-Policy (also in its `<meta http-equiv>`). */
  csp: string;
}

/** Names of the networks an offer can be on, by CAIP-2 id. */
const NETWORK_NAMES: Readonly<Record<string, string>> = { 'eip155:8453': 'Base', 'eip155:84532': 'Base Sepolia' };
/** USDC has 6 decimals on every network we offer. */
const USDC_DECIMALS = 6;

const STYLE = [
  ':root{color-scheme:light dark;--fg:#111827;--muted:#4b5563;--bg:#f9fafb;--card:#fff;--line:#e5e7eb;--code:#f3f4f6;--accent:#2563eb}',
  '@media (prefers-color-scheme:dark){:root{--fg:#f3f4f6;--muted:#9ca3af;--bg:#0b0f17;--card:#111827;--line:#1f2937;--code:#1f2937;--accent:#60a5fa}}',
  '*{box-sizing:border-box}',
  'body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}',
  'main{max-width:40rem;margin:2rem auto;padding:1.5rem;background:var(--card);border:1px solid var(--line);border-radius:.75rem}',
  'h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}',
  '.sub{color:var(--muted);margin:0 0 1rem}',
  '.price{font-size:2rem;font-weight:700;margin:.5rem 0 0}.atomic{color:var(--muted);margin:0 0 1rem}',
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}dt{color:var(--muted)}dd{margin:0;min-width:0;overflow-wrap:anywhere}',
  'code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}',
  'code{background:var(--code);padding:.05rem .3rem;border-radius:.25rem}',
  'pre{background:var(--code);padding:.75rem;border-radius:.5rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}pre code{padding:0;background:none}',
  'a{color:var(--accent)}ol{padding-left:1.25rem}li{margin:.25rem 0}',
  '.note{color:var(--muted);font-size:.9rem}',
  'button{font:inherit;font-weight:600;padding:.6rem 1.1rem;border:0;border-radius:.5rem;background:var(--accent);color:#fff;cursor:pointer}button:disabled{opacity:.6;cursor:default}',
  '#pay-status{margin:.75rem 0 0}#pay-result:empty{display:none}',
  '@media (max-width:30rem){main{margin:0;border-radius:0;border-width:0 0 1px}dl{grid-template-columns:1fr}dt{margin-top:.35rem}}',
].join('');

/**
 * Pays the offer from a browser wallet. Plain ES2020, run as is by the browser; it reads the
 * offer from the `x402-offer` data block.
 */
const PAY_SCRIPT = `(() => {
  const offer = JSON.parse(document.getElementById('x402-offer').textContent);
  const req = offer.accepts[0];
  const button = document.getElementById('pay');
  const status = document.getElementById('pay-status');
  const result = document.getElementById('pay-result');
  const say = (text) => { status.textContent = text; };
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  const base64 = (text) => btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(''));
  button.addEventListener('click', async () => {
    const wallet = window.ethereum;
    if (!wallet) return say('No browser wallet found: install one that provides window.ethereum (MetaMask, Coinbase Wallet, …), or pay with an x402 client.');
    button.disabled = true;
    try {
      const [from] = await wallet.request({ method: 'eth_requestAccounts' });
      const chainId = Number(req.network.split(':')[1]);
      if (parseInt(await wallet.request({ method: 'eth_chainId' }), 16) !== chainId) {
        await wallet.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x' + chainId.toString(16) }] });
      }
      const authorization = {
        from, to: req.payTo, value: req.amount, validAfter: '0',
        validBefore: String(Math.floor(Date.now() / 1000) + req.maxTimeoutSeconds),
        nonce: '0x' + hex(crypto.getRandomValues(new Uint8Array(32))),
      };
      const typedData = {
        types: {
          EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }],
          TransferWithAuthorization: [{ name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' }, { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' }],
        },
        primaryType: 'TransferWithAuthorization',
        domain: { name: req.extra.name, version: req.extra.version, chainId, verifyingContract: req.asset },
        message: authorization,
      };
      say('Sign the USDC transfer authorization in your wallet…');
      const signature = await wallet.request({ method: 'eth_signTypedData_v4', params: [from, JSON.stringify(typedData)] });
      const payment = {
        x402Version: 2, resource: offer.resource, accepted: req, payload: { signature, authorization },
        // Resending this exact payment (a lost answer) is then answered again, charged once.
        extensions: { 'payment-identifier': { info: { required: false, id: 'page_' + hex(crypto.getRandomValues(new Uint8Array(16))) } } },
      };
      say('Paying…');
      const res = await fetch(location.pathname + location.search, { headers: { 'PAYMENT-SIGNATURE': base64(JSON.stringify(payment)), Accept: 'application/json' } });
      const body = await res.json();
      if (!res.ok) return say('Not paid (' + res.status + '): ' + ((body.error && body.error.message) || 'refused'));
      say('Paid ' + (Number(req.amount) / 1e6) + ' USD (USDC): ' + body.count + (body.count === 1 ? ' result.' : ' results.'));
      result.textContent = JSON.stringify(body, null, 2);
    } catch (err) {
      say('Not paid: ' + ((err && err.message) || err));
    } finally {
      button.disabled = false;
    }
  });
})();`;

/** JSON inside a <script type="application/json">: nothing in it may close the element. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function esc(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** "5000" atomic units with 6 decimals -> "0.005" (exact, no floating point). */
export function atomicToDecimal(amount: string, decimals = USDC_DECIMALS): string {
  if (!/^\d+$/.test(amount)) throw new Error(`invalid atomic amount ${amount}`);
  const padded = amount.padStart(decimals + 1, '0');
  const whole = padded.slice(0, -decimals).replace(/^0+(?=\d)/, '');
  const frac = padded.slice(-decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

export function buildPaywallPage(offer: Offer): PaywallPage {
  const { route, requirements: req, paymentRequired } = offer;
  const resource = paymentRequired.resource;
  const usd = atomicToDecimal(req.amount);
  const network = NETWORK_NAMES[req.network] ? `${NETWORK_NAMES[req.network]} (${req.network})` : req.network;
  const wire = route.wire;
  const example = [
    "import { x402Client } from '@x402/core/client';",
    "import { ExactEvmScheme } from '@x402/evm/exact/client';",
    "import { wrapFetchWithPayment } from '@x402/fetch';",
    "import { privateKeyToAccount } from 'viem/accounts';",
    '',
    '// KEY: the private key of a wallet holding USDC on Base',
    "const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(KEY)));",
    'const pay = wrapFetchWithPayment(fetch, client);',
    `const res = await pay('${resource.url}');`,
    'console.log(await res.json());',
  ].join('\n');

  const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');
  const csp = `default-src 'none'; script-src 'sha256-${hash(PAY_SCRIPT)}'; style-src 'sha256-${hash(STYLE)}'; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'`;

  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="robots" content="noindex">
<title>Payment required: ${esc(route.path)} · wires</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Payment required</h1>
<p class="sub"><code>GET ${esc(route.path)}</code> · ${esc(wire.title)}: ${esc(resource.description)}</p>
<p class="price" id="price">$${esc(usd)} <small>USD per call</small></p>
<p class="atomic" id="atomic">${esc(req.amount)} USDC atomic units (${USDC_DECIMALS} decimals), paid with x402 v2</p>
<dl id="offer">
<dt>Resource</dt><dd><code id="resource">${esc(resource.url)}</code></dd>
<dt>Network</dt><dd id="network">${esc(network)}</dd>
<dt>Asset</dt><dd>USDC <code id="asset">${esc(req.asset)}</code></dd>
<dt>Pay to</dt><dd><code id="pay-to">${esc(req.payTo)}</code></dd>
<dt>Scheme</dt><dd><code>${esc(req.scheme)}</code> (EIP-3009 transfer authorization, valid ${esc(req.maxTimeoutSeconds)} s)</dd>
</dl>
<h2>Free preview</h2>
<p>The free preview <a id="preview" href="${esc(route.previewPath)}">${esc(route.previewPath)}</a> returns the top ${esc(route.wire.preview.maxLimit)} results without payment.</p>
<h2>Pay from your browser wallet</h2>
<p>Your wallet (it must hold USDC on ${esc(network)}) signs a transfer authorization for exactly this amount to the address above; this page then sends it with the request and shows the data.</p>
<button id="pay" type="button">Pay $${esc(usd)} and get the data</button>
<p id="pay-status" role="status"></p>
<pre id="pay-result"></pre>
<h2>Pay with an x402 client</h2>
<p>Or call the route with an x402 client that signs the payment:</p>
<ol>
<li>Call <code>GET ${esc(resource.url)}</code> without payment. The answer is <code>402</code>, and its <code>PAYMENT-REQUIRED</code> header holds this offer (base64 JSON).</li>
<li>Sign a USDC transfer authorization for exactly this amount to the address above, on ${esc(network)}.</li>
<li>Send the same request again with the signed payment in the <code>PAYMENT-SIGNATURE</code> header. The answer is <code>200</code> with the data, and the settlement is in <code>PAYMENT-RESPONSE</code>.</li>
</ol>
<pre><code>${esc(example)}</code></pre>
<p class="note">Compare the offer with <a href="/.well-known/x402">/.well-known/x402</a> before you sign. <a href="/">All wires and prices</a>.</p>
</main>
<script type="application/json" id="x402-offer">${jsonForScript(paymentRequired)}</script>
<script>${PAY_SCRIPT}</script>
</body>
</html>
`;
  return { html, csp };
}
