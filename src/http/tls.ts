/**
 * HTTPS and WSS served by the service itself (uWebSockets.js's SSLApp, BoringSSL), and the
 * certificate's reload without a restart.
 *
 * An SSLApp keeps the certificate it was built with, so a reload builds a new app with the new
 * one (every route, the same state, the same streams' hub), listens it on the same port beside
 * the current one (port reuse), and then closes the current one's listening socket: new
 * connections get the new certificate whatever name they send (or none, by IP address), and
 * open connections, streams included, stay on the app they were accepted by until they close.
 * Connections the kernel had queued on the closed listener but the service had not accepted
 * yet move to the new one when `net.ipv4.tcp_migrate_req` is 1 (deploy/sysctl/); at 0 Linux
 * resets them, which the service warns of at start.
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
  private readonly onSignal = () => void this.reload('SIGHUP');
  private readonly onChange = (now: Stats, before: Stats) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) void this.reload('file change');
  };
  /** A reload under way: another waits for it, so two never listen at once. */
  private running: Promise<boolean> = Promise.resolve(true);

  constructor(
    /** Serves new connections with an app built on these files. */
    private readonly serve: (files: TlsFiles) => Promise<void>,
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
  reload(why: string): Promise<boolean> {
    this.running = this.running.then(() => this.swap(why));
    return this.running;
  }

  private async swap(why: string): Promise<boolean> {
    let next: Certificate;
    try {
      next = readCertificate(this.files);
      if (next.serial === this.current.serial && next.notAfter === this.current.notAfter) return true;
      await this.serve(this.files);
    } catch (err) {
      log.error('TLS certificate not reloaded: the files do not load; the current certificate stays', { why, error: String((err as Error).message ?? err), ...this.files });
      return false;
    }
    this.current = next;
    log.info('TLS certificate reloaded', { why, names: next.names, serial: next.serial, not_after: next.notAfter });
    return true;
  }
}

/** Whether Linux moves connections queued on a closed listener to another on its port (see above). */
export function migratesQueuedConnections(): boolean | null {
  try {
    return readFileSync('/proc/sys/net/ipv4/tcp_migrate_req', 'utf8').trim() === '1';
  } catch {
    return null; // not Linux, or no such setting (before 5.14)
  }
}
