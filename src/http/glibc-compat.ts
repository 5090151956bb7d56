/**
 * Lets a uWebSockets.js binary linked against glibc 2.38 load on glibc 2.36 and 2.37
 * (Debian 12), by binding its C23 number parsers to the classic ones.
 *
 * Compiled on glibc 2.38 or newer, C and C++ calls to strtol, strtoul and sscanf become calls
 * to `__isoc23_strtol`, `__isoc23_sscanf` and so on, versioned GLIBC_2.38: the only things in
 * the release's binaries that an older glibc lacks. The C23 variants differ from the classic
 * ones only in reading binary numbers ("0b" with base 0 or 2, and scanf's `%b`); every other
 * input parses the same.
 *
 * The rewrite touches three tables of the ELF file and nothing else:
 *  - each C23 import gets its classic name: `__isoc23_strtol` becomes `strtol`, the same string
 *    from its tenth character on, and `__isoc23_sscanf` becomes `__isoc99_sscanf` in place;
 *  - those imports become unversioned (.gnu.version index 1), so the loader binds each to the
 *    one version the classic function has (strtol@GLIBC_2.2.5, __isoc99_sscanf@GLIBC_2.7);
 *  - the now unused GLIBC_2.38 entry of libc's version requirements is renamed to a version
 *    every glibc has (GLIBC_2.2.5 on x86-64), as the loader checks each entry.
 * Any other use of a glibc newer than 2.36 is refused with the symbol named, never guessed.
 */

/** Newest glibc the rewritten binary may require: Debian 12's. */
const HOST_GLIBC = [2, 36] as const;
const C23 = '__isoc23_';
/** C23 imports whose classic twin is the name without the prefix. */
const STRTO = new Set(['strtol', 'strtoul', 'strtoll', 'strtoull', 'strtoimax', 'strtoumax']);
/** C23 imports whose classic twin is the C99 one, `__isoc99_` plus the same name. */
const SCANF = new Set(['sscanf', 'fscanf', 'scanf', 'vsscanf', 'vfscanf', 'vscanf']);
/** A version of libc that every glibc has, per ELF machine. */
const BASE_VERSION: Record<number, string> = { 62: 'GLIBC_2.2.5', 183: 'GLIBC_2.17' };
const VER_NDX_GLOBAL = 1;

const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const SYM_SIZE = 24;

export class GlibcCompatError extends Error {}

export interface GlibcCompatResult {
  /** The rewritten file, or null when the binary needs nothing newer than glibc 2.36. */
  patched: Buffer | null;
  /** The imports that were rebound, as `__isoc23_strtol -> strtol`. */
  rebound: string[];
}

interface Section {
  type: number;
  offset: number;
  size: number;
  link: number;
  info: number;
}

function cstr(buf: Buffer, at: number): string {
  const end = buf.indexOf(0, at);
  if (end < 0) throw new GlibcCompatError('unterminated string in the dynamic string table');
  return buf.toString('latin1', at, end);
}

function newerThanHost(version: string): boolean {
  const m = /^GLIBC_(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > HOST_GLIBC[0] || (major === HOST_GLIBC[0] && minor > HOST_GLIBC[1]);
}

function sections(elf: Buffer): Section[] {
  if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46) throw new GlibcCompatError('not an ELF file');
  if (elf[4] !== 2 || elf[5] !== 1) throw new GlibcCompatError('not a 64-bit little-endian ELF file');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  if (shentsize !== 64 || shoff + shnum * 64 > elf.length) throw new GlibcCompatError('bad section header table');
  return Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * 64;
    return {
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 24)),
      size: Number(elf.readBigUInt64LE(at + 32)),
      link: elf.readUInt32LE(at + 40),
      info: elf.readUInt32LE(at + 44),
    };
  });
}

/** Whether another symbol's name starts inside the first 9 bytes of symbol `self`'s name. */
function sharesPrefix(elf: Buffer, dynsym: Section, nameOff: number, self: number): boolean {
  for (let i = 0; i < dynsym.size / SYM_SIZE; i++) {
    const off = elf.readUInt32LE(dynsym.offset + i * SYM_SIZE);
    if (i !== self && off > nameOff && off < nameOff + C23.length) return true;
  }
  return false;
}

function only(all: Section[], type: number, what: string): Section {
  const found = all.filter((s) => s.type === type);
  if (found.length !== 1) throw new GlibcCompatError(`expected one ${what} section, found ${found.length}`);
  return found[0]!;
}

/** Rewrites a copy of `elf` so that it loads on glibc 2.36; the input is left untouched. */
export function glibcCompat(elf: Buffer): GlibcCompatResult {
  const all = sections(elf);
  const dynsym = only(all, SHT_DYNSYM, '.dynsym');
  const versym = only(all, SHT_GNU_VERSYM, '.gnu.version');
  const verneed = only(all, SHT_GNU_VERNEED, '.gnu.version_r');
  const dynstr = all[dynsym.link];
  const verstr = all[verneed.link];
  if (!dynstr || !verstr) throw new GlibcCompatError('missing string table');
  const base = BASE_VERSION[elf.readUInt16LE(0x12)];
  if (!base) throw new GlibcCompatError(`unsupported machine ${elf.readUInt16LE(0x12)}`);
  const str = (table: Section, off: number) => cstr(elf, table.offset + off);

  // Version requirements: index -> name, and where each libc entry lives.
  const versionName = new Map<number, string>();
  const libcAux: { at: number; name: string; index: number }[] = [];
  let need = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    const file = str(verstr, elf.readUInt32LE(need + 4));
    let aux = need + elf.readUInt32LE(need + 8);
    for (let a = elf.readUInt16LE(need + 2); a > 0; a--) {
      const index = elf.readUInt16LE(aux + 6) & 0x7fff;
      const name = str(verstr, elf.readUInt32LE(aux + 8));
      versionName.set(index, name);
      if (file === 'libc.so.6') libcAux.push({ at: aux, name, index });
      else if (newerThanHost(name)) throw new GlibcCompatError(`${file} is required at ${name}`);
      aux += elf.readUInt32LE(aux + 12);
    }
    need += elf.readUInt32LE(need + 12);
  }
  const newer = libcAux.filter((a) => newerThanHost(a.name));
  if (newer.length === 0) return { patched: null, rebound: [] };
  const baseAux = libcAux.find((a) => a.name === base);
  if (!baseAux) throw new GlibcCompatError(`libc.so.6 is not required at ${base}`);
  const newerIndex = new Set(newer.map((a) => a.index));

  const out = Buffer.from(elf);
  const rebound: string[] = [];
  const count = dynsym.size / SYM_SIZE;
  for (let i = 0; i < count; i++) {
    const index = elf.readUInt16LE(versym.offset + i * 2) & 0x7fff;
    if (!newerIndex.has(index)) continue;
    const at = dynsym.offset + i * SYM_SIZE;
    const nameOff = elf.readUInt32LE(at);
    const name = str(dynstr, nameOff);
    const bare = name.slice(C23.length);
    const undefinedImport = name.startsWith(C23) && elf.readUInt16LE(at + 6) === 0;
    let twin: string;
    if (undefinedImport && STRTO.has(bare)) {
      twin = bare;
      out.writeUInt32LE(nameOff + C23.length, at);
    } else if (undefinedImport && SCANF.has(bare) && !sharesPrefix(elf, dynsym, nameOff, i)) {
      twin = `__isoc99_${bare}`;
      out.write(twin, dynstr.offset + nameOff, 'latin1');
    } else {
      throw new GlibcCompatError(`${name}@${versionName.get(index)} has no classic twin in glibc 2.36`);
    }
    out.writeUInt16LE(VER_NDX_GLOBAL, versym.offset + i * 2);
    rebound.push(`${name} -> ${twin}`);
  }
  for (const aux of newer) {
    out.writeUInt32LE(elf.readUInt32LE(baseAux.at), aux.at); // vna_hash
    out.writeUInt32LE(elf.readUInt32LE(baseAux.at + 8), aux.at + 8); // vna_name
  }
  return { patched: out, rebound };
}
