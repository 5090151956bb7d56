/**
 * HTTPS and WSS served by the service itself (uWebSockets.js's SSLApp, BoringSSL), and the
 * certificate's reload without a restart.
 *
 * uWebSockets.js cannot replace the certificate an app was built with, but it can add one per
 * server name (SNI), and one added for a name wins over the app's. A reload therefore adds the
 * new certificate under each DNS name it covers, in place of the previous reload's, with every
 * route on that name's router (uWS routes a connection by the name it sent): every client that
 * names the host (every browser and HTTP library given a host name) gets the new one on its
 * next handshake, while open connections keep theirs. A client that connects to an IP address
 * sends no name and gets the certificate loaded at start until the next restart. uWS prints
 * "finding <name>" on stdout when it removes a name: one line per name and reload.
 * uSockets allows TLS 1.2 and 1.3 only, with BoringSSL's default ciphers.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync, type Stats, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { AppOptions, TemplatedApp } from 'uWebSockets.js';
import { log } from '../log.js';

export interface TlsFiles {
  cert: string;
  key: string;
}

export interface Certificate {
  /** The DNS names it covers (subjectAltName, else the common name); wildcards as written. */
  names: string[];
  notAfter: string;
  serial: string;
}

/** The files' certificate, once it is known to load with its key; throws with the reason. */
export function readCertificate(files: TlsFiles): Certificate {
  const cert = readFileSync(files.cert);
  const key = readFileSync(files.key);
  // Throws when the key does not match the certificate, or either does not parse.
  createSecureContext({ cert, key });
  const x509 = new X509Certificate(cert);
  const sans = (x509.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(x509.subject)?.[1];
  return { names: sans.length > 0 ? sans : cn ? [cn] : [], notAfter: new Date(x509.validTo).toISOString(), serial: x509.serialNumber };
}

export const appOptions = (files: TlsFiles): AppOptions => ({ cert_file_name: files.cert, key_file_name: files.key });

/** How often the files are checked for a change (a renewal tool replacing them). */
const WATCH_MS = 2000;

export class CertificateReloader {
  private added: string[] = [];
  private readonly onSignal = () => this.reload('SIGHUP');
  private readonly onChange = (now: Stats, before: Stats) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) this.reload('file change');
  };

  constructor(
    private readonly app: TemplatedApp,
    /** Serves every route on a server name's router. */
    private readonly route: (name: string) => void,
    private readonly files: TlsFiles,
    public current: Certificate,
  ) {}

  /** Reloads on SIGHUP and when either file changes. */
  start(): void {
    process.on('SIGHUP', this.onSignal);
    for (const file of [this.files.cert, this.files.key]) watchFile(file, { interval: WATCH_MS, persistent: false }, this.onChange);
  }

  stop(): void {
    process.off('SIGHUP', this.onSignal);
    for (const file of [this.files.cert, this.files.key]) unwatchFile(file, this.onChange);
  }

  /** Serves the files' certificate from the next handshake on; a pair that does not load is refused and the current one kept. */
  reload(why: string): boolean {
    let next: Certificate;
    try {
      next = readCertificate(this.files);
    } catch (err) {
      log.error('TLS certificate not reloaded: the files do not load; the current certificate stays', { why, error: String((err as Error).message ?? err), ...this.files });
      return false;
    }
    if (next.serial === this.current.serial && this.added.length > 0) return true;
    // Synchronous, on the thread that makes handshakes: none sees a name between removal and addition.
    for (const name of this.added) this.app.removeServerName(name);
    for (const name of next.names) {
      this.app.addServerName(name, appOptions(this.files));
      this.route(name);
    }
    this.added = next.names;
    this.current = next;
    log.info('TLS certificate reloaded', { why, names: next.names, serial: next.serial, not_after: next.notAfter });
    return true;
  }
}
