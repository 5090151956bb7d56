/**
 * HTTPS and WSS served by the service itself (uWebSockets.js's SSLApp, BoringSSL), and the
 * certificate's reload without a restart.
 *
 * An SSLApp keeps the certificate it was made with, so the app that listens only accepts, and
 * hands each new socket, before its handshake, to the app that serves (server.ts). A reload
 * makes a serving app with the new certificate (every route, the same state, the same
 * streams' hub) and puts it in the old one's place: every new connection gets the new
 * certificate, whatever name it sends (or none, by IP address), and open connections, streams
 * included, stay on the app that took them until they close. The listening socket is never
 * closed, so a reload refuses and resets no connection.
 * uSockets allows TLS 1.2 and 1.3 only, with BoringSSL's default ciphers.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync, type Stats, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { AppOptions } from 'uWebSockets.js';
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
  private readonly onSignal = () => this.reload('SIGHUP');
  private readonly onChange = (now: Stats, before: Stats) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) this.reload('file change');
  };
  constructor(
    /** Serves new connections with a certificate from these files; throws when they do not load. */
    private readonly serve: (files: TlsFiles) => void,
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

  /** Serves the files' certificate from the next connection on; a pair that does not load is refused and the current one kept. */
  reload(why: string): boolean {
    let next: Certificate;
    try {
      next = readCertificate(this.files);
      if (next.serial === this.current.serial && next.notAfter === this.current.notAfter) return true;
      this.serve(this.files);
    } catch (err) {
      log.error('TLS certificate not reloaded: the files do not load; the current certificate stays', { why, error: String((err as Error).message ?? err), ...this.files });
      return false;
    }
    this.current = next;
    log.info('TLS certificate reloaded', { why, names: next.names, serial: next.serial, not_after: next.notAfter });
    return true;
  }
}
