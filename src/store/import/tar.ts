/**
 * A reader for tar archives (POSIX ustar, with the pax `path` and GNU long-name extensions), enough to import an
 * archive of CSV files (`folio import prices.tar.gz`, docs/data.md §3) without unpacking it first.
 *
 * Layout: a sequence of 512-byte headers, each followed by its member's bytes padded to a multiple of 512; two zero
 * blocks (or the end of the data) end the archive. Header fields used: name (0, 100 bytes), size (124, 12 bytes,
 * octal, or base-256 when the high bit of the first byte is set), checksum (148, 8 bytes octal: the sum of the
 * header's bytes with this field read as spaces), type flag (156), magic (257, "ustar"), prefix (345, 155 bytes).
 * Members of type '0' or NUL are regular files; 'x' (pax) headers may carry the next member's `path`; 'L' (GNU)
 * headers carry it as data; every other type (directories, links, devices, global pax headers) is skipped.
 * Complexity: O(archive bytes); members are views into the archive's buffer, nothing is copied.
 */

/** One regular file of an archive. */
export interface TarMember {
  /** Its path inside the archive (`dir/file.csv`). */
  path: string;
  /** Its bytes: a view into the archive. */
  data: Uint8Array;
}

/** Thrown for bytes that are not a well-formed tar archive. */
export class TarFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TarFormatError";
  }
}

const BLOCK = 512;
const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder("utf-8");

function cString(b: Uint8Array, from: number, len: number): string {
  let end = from;
  while (end < from + len && b[end] !== 0) end++;
  return utf8.decode(b.subarray(from, end));
}

function octal(b: Uint8Array, from: number, len: number, what: string, at: number): number {
  if (b[from] & 0x80) {
    // base-256 (GNU): big-endian two's complement in the remaining bytes; sizes are never negative.
    let v = 0;
    for (let i = from + 1; i < from + len; i++) v = v * 256 + b[i];
    return v;
  }
  const text = latin1.decode(b.subarray(from, from + len)).replace(/\0.*$/s, "").trim();
  if (!/^[0-7]*$/.test(text)) throw new TarFormatError(`not a tar archive: the ${what} field of the header at byte ${at} is ${JSON.stringify(text)}`);
  return text === "" ? 0 : Number.parseInt(text, 8);
}

/** True when `b` starts with a tar header (the ustar magic at byte 257, or a valid checksum). */
export function looksLikeTar(b: Uint8Array): boolean {
  if (b.length < BLOCK) return false;
  if (latin1.decode(b.subarray(257, 262)) === "ustar") return true;
  try {
    return checksumOk(b, 0);
  } catch {
    return false;
  }
}

function checksumOk(b: Uint8Array, at: number): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : b[at + i];
  return sum === octal(b, at + 148, 8, "checksum", at);
}

/** The `path` record of a pax extended header (`<len> path=<value>\n` records), if any. */
function paxPath(data: Uint8Array): string | undefined {
  const text = utf8.decode(data);
  let i = 0;
  while (i < text.length) {
    const sp = text.indexOf(" ", i);
    if (sp < 0) break;
    const len = Number.parseInt(text.slice(i, sp), 10);
    if (!(len > 0)) break;
    const record = text.slice(sp + 1, i + len - 1);
    if (record.startsWith("path=")) return record.slice(5);
    i += len;
  }
  return undefined;
}

/** The regular files of a tar archive, in archive order. Throws TarFormatError for malformed bytes. */
export function tarMembers(archive: Uint8Array): TarMember[] {
  const out: TarMember[] = [];
  let at = 0;
  let nextPath: string | undefined;
  while (at + BLOCK <= archive.length) {
    const header = archive.subarray(at, at + BLOCK);
    if (header.every((x) => x === 0)) break; // end-of-archive marker
    if (!checksumOk(archive, at)) throw new TarFormatError(`not a tar archive: bad header checksum at byte ${at}`);
    const size = octal(archive, at + 124, 12, "size", at);
    const type = String.fromCharCode(archive[at + 156]);
    const start = at + BLOCK;
    if (start + size > archive.length) throw new TarFormatError(`truncated tar archive: a member at byte ${at} needs ${size} bytes`);
    const data = archive.subarray(start, start + size);
    const magic = latin1.decode(archive.subarray(at + 257, at + 262));
    const prefix = magic === "ustar" ? cString(archive, at + 345, 155) : "";
    const name = cString(archive, at, 100);
    if (type === "x") nextPath = paxPath(data) ?? nextPath;
    else if (type === "L") nextPath = cString(data, 0, data.length);
    else {
      if (type === "0" || type === "\0") out.push({ path: nextPath ?? (prefix ? `${prefix}/${name}` : name), data });
      nextPath = undefined;
    }
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return out;
}
