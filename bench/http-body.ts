/**
 * A GET's body as text, with node:http (or node:https), for the benches that ask a service
 * whether it serves: the first `fetch` in a process loads Node's own undici (70-80 ms of the
 * asking thread), which a bench that times a start must not count.
 */
import { get as httpGet, type RequestOptions } from 'node:http';
import { get as httpsGet } from 'node:https';

export function getBody(target: string | (RequestOptions & { rejectUnauthorized?: boolean }), tls = false): Promise<string> {
  return new Promise((resolve, reject) => {
    (tls ? httpsGet : httpGet)(target, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}
