/**
 * A response body is the one thing a remote server fully controls. It can be
 * 50 MB instead of 50 KB, or a 1 MB gzip that inflates to gigabytes. This module reads a body
 * as a stream and stops the moment either cap is passed: `maxBodyBytes` on the bytes received
 * and `maxDecodedBytes` on the bytes after Content-Encoding is undone. Decompression runs as
 * node:zlib streams (on libuv's thread pool, chunk by chunk), so a bomb costs at most the
 * decoded cap plus a chunk of memory, never the whole inflated document.
 */
import { Readable, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw, type ZlibOptions } from 'node:zlib';
import { FetchFailure } from './errors.js';

export interface BodyLimits {
  maxBodyBytes: number;
  maxDecodedBytes: number;
}

export interface ReadBody {
  body: Buffer;
  /** Bytes received on the wire (before decoding). */
  bytes: number;
}

type Stage = (source: AsyncIterable<Buffer>) => AsyncIterable<Buffer>;

/** More layered codings than any real server sends; more is treated as hostile. */
const MAX_CODINGS = 2;

/** Decoder output chunk size: fewer, larger chunks than zlib's 16 KiB default, still small. */
const CHUNK = 64 * 1024;

/**
 * The codings of a Content-Encoding header, in the order they must be undone. Throws
 * `bad_encoding` for one we cannot undo (we only advertise gzip, deflate and br).
 */
export function codingsOf(header: string | undefined): string[] {
  if (!header) return [];
  const applied = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (applied.length > MAX_CODINGS) throw new FetchFailure('bad_encoding', `Content-Encoding with ${applied.length} layers`);
  for (const c of applied) {
    if (!['gzip', 'x-gzip', 'deflate', 'br'].includes(c)) throw new FetchFailure('bad_encoding', `unsupported Content-Encoding ${c.slice(0, 40)}`);
  }
  return applied.reverse();
}

/**
 * Reads `source` (undici's body) to the end under both caps, undoing `codings` on the way.
 * Any cap or decoding failure is thrown as a `FetchFailure`, and the body is destroyed, which
 * closes the connection at once instead of draining the rest of a huge answer.
 */
export async function readBody(source: Readable, codings: readonly string[], limits: BodyLimits): Promise<ReadBody> {
  try {
    return await readStages(source, codings, limits);
  } catch (err) {
    // Stopping early must close the connection even if a decoder still holds the source.
    destroyQuietly(source);
    throw err;
  }
}

/**
 * Destroys a body we are giving up on. undici's body emits 'error' when destroyed before its
 * end, and an 'error' nobody listens to would crash the process: listen, then destroy.
 */
export function destroyQuietly(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

async function readStages(source: Readable, codings: readonly string[], limits: BodyLimits): Promise<ReadBody> {
  let bytes = 0;
  const counted: Stage = async function* (input) {
    for await (const chunk of input) {
      bytes += chunk.length;
      if (bytes > limits.maxBodyBytes) throw new FetchFailure('too_large', `body exceeds the ${limits.maxBodyBytes}-byte cap`);
      yield chunk;
    }
  };
  let stream = counted(source);
  for (const coding of codings) stream = decoderStage(coding)(stream);

  const chunks: Buffer[] = [];
  let decoded = 0;
  for await (const chunk of stream) {
    decoded += chunk.length;
    if (decoded > limits.maxDecodedBytes) {
      throw new FetchFailure('decoded_too_large', `decoded body exceeds the ${limits.maxDecodedBytes}-byte cap (${bytes} bytes received)`);
    }
    chunks.push(chunk);
  }
  return { body: Buffer.concat(chunks, decoded), bytes };
}

/**
 * One decoding layer. It looks at the first two bytes before choosing a decoder: "deflate"
 * is meant to be zlib-wrapped but some servers send raw deflate, and a body labelled gzip
 * that lacks the gzip magic number was never compressed (a misconfigured server), so it
 * passes through untouched rather than failing the whole source.
 */
function decoderStage(coding: string): Stage {
  return async function* (input) {
    const it = input[Symbol.asyncIterator]();
    let head: Buffer = Buffer.alloc(0);
    while (head.length < 2) {
      const n = await it.next();
      if (n.done) {
        if (head.length > 0) yield head;
        return;
      }
      head = head.length === 0 ? n.value : Buffer.concat([head, n.value]);
    }
    let upstreamError: unknown;
    const rest = async function* () {
      yield head;
      try {
        for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
      } catch (err) {
        upstreamError = err;
        throw err;
      }
    };
    const decoder = createDecoder(coding, head);
    if (!decoder) return yield* rest();
    // `pipeline` destroys both streams if either fails and returns the decoder, whose
    // iterator then rejects with that error.
    const out = pipeline(Readable.from(rest(), { objectMode: false }), decoder, () => {});
    try {
      for await (const chunk of out) yield chunk as Buffer;
    } catch (err) {
      if (err === upstreamError || err instanceof FetchFailure) throw err;
      const code = (err as { code?: unknown }).code;
      throw new FetchFailure('bad_encoding', `cannot decode the ${coding} body${typeof code === 'string' ? ` (${code})` : ''}`);
    }
  };
}

function createDecoder(coding: string, head: Buffer) {
  const opts: ZlibOptions = { chunkSize: CHUNK };
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return head[0] === 0x1f && head[1] === 0x8b ? createGunzip(opts) : undefined;
    case 'deflate':
      return isZlibHeader(head) ? createInflate(opts) : createInflateRaw(opts);
    case 'br':
      return createBrotliDecompress(opts);
    default:
      throw new FetchFailure('bad_encoding', `unsupported Content-Encoding ${coding}`);
  }
}

/** RFC 1950 header: compression method 8 and a header checksum divisible by 31. */
function isZlibHeader(head: Buffer): boolean {
  const cmf = head[0]!;
  const flg = head[1]!;
  return (cmf & 0x0f) === 8 && ((cmf << 8) | flg) % 31 === 0;
}
