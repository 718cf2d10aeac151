/**
 * The on-disk price store format (`<DATA_DIR>/prices.folio`), little-endian, version 2 (docs/data.md §2).
 *
 * ```
 * offset  size            field
 * 0       8               magic "FOLIOPX1"
 * 8       4   u32         format version (2; version 1 is still read, see below)
 * 12      4   u32         flags (bit 0: synthetic universe)
 * 16      4   u32         K, number of tickers
 * 20      4   u32         R, total number of (day, close) rows
 * 24      4   u32         byte length of the names blob
 * 28      4   u32         byte length of the description (UTF-8)
 * 32      32              SHA-256 of bytes [0, 32) followed by bytes [64, end)   (version 2 only)
 * H       16·K            index, sorted by symbol: u32 first row, u32 row count, u32 name offset, u32 name length
 * …                       names blob (UTF-8), then the description (UTF-8), zero-padded to a multiple of 8
 * A       8·R f64         closes, ticker after ticker (A is a multiple of 8)
 * A+8R    4·R i32         epoch days (days since 1970-01-01), same order; strictly ascending within a ticker
 * ```
 * H is 64 in version 2 and 32 in version 1 (which has no checksum). Every writer writes version 2.
 *
 * Opening is one read into a fresh ArrayBuffer plus typed-array views over it (no per-row parsing, one checksum
 * pass and one validation pass). The file size must match the header exactly, the checksum must match, and every
 * close must be finite and > 0, from 1e-150 to 1e150 (`MIN_CLOSE`, `MAX_CLOSE`), with days strictly ascending within
 * a ticker; anything else is reported as a corrupt store (StoreFormatError), so a bad stored value can never reach
 * a client. Big-endian hosts are refused (none run Node 20 in practice).
 */
import { createHash } from "node:crypto";
import { endianness } from "node:os";
import type { TickerSeries } from "./types.js";
import { MAX_CLOSE, MIN_CLOSE } from "./import/cells.js";

export const STORE_FILE = "prices.folio";
const MAGIC = "FOLIOPX1";
/** The version every writer writes. */
export const STORE_FORMAT_VERSION = 2;
/** Fixed header fields (both versions). */
const FIELDS = 32;
/** Header size by version: version 2 adds the 32-byte SHA-256. */
const HEADER_V1 = 32;
const HEADER_V2 = 64;
const ENTRY = 16;
const DIGEST = 32;

/** SHA-256 of the header fields and everything after the header (the digest slot itself excluded). */
function bodyDigest(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(bytes.subarray(0, FIELDS)).update(bytes.subarray(HEADER_V2)).digest();
}

export interface StoreContents {
  synthetic: boolean;
  description: string;
  /** Sorted by symbol (code-unit order), symbols unique case-insensitively. */
  tickers: string[];
  /** First row and row count of each ticker in `days`/`closes`. */
  starts: Uint32Array;
  counts: Uint32Array;
  days: Int32Array;
  closes: Float64Array;
}

export class StoreFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreFormatError";
  }
}

/** Code-unit order, the order of `list()` and of the index. */
export function compareSymbols(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Serialise series (any order; sorted here) into the store format. */
/** K, the number of tickers, read from a store's header alone (no checksum or validation pass; see the layout above). */
export function storeTickerCount(bytes: Uint8Array): number {
  if (bytes.length < 20) throw new StoreFormatError("file too short for a price store header");
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(16, true);
}

export function encodeStore(series: readonly TickerSeries[], meta: { synthetic: boolean; description: string }): Uint8Array {
  const sorted = [...series].sort((a, b) => compareSymbols(a.ticker, b.ticker));
  const enc = new TextEncoder();
  const names = sorted.map((s) => enc.encode(s.ticker));
  const namesBytes = names.reduce((n, b) => n + b.length, 0);
  const desc = enc.encode(meta.description);
  const rows = sorted.reduce((n, s) => n + s.days.length, 0);
  const K = sorted.length;
  const HEADER = HEADER_V2;
  const metaEnd = HEADER + ENTRY * K + namesBytes + desc.length;
  const A = Math.ceil(metaEnd / 8) * 8;
  const total = A + 12 * rows;
  const buf = new ArrayBuffer(total);
  const u8 = new Uint8Array(buf);
  const dv = new DataView(buf);
  for (let i = 0; i < 8; i++) u8[i] = MAGIC.charCodeAt(i);
  dv.setUint32(8, STORE_FORMAT_VERSION, true);
  dv.setUint32(12, meta.synthetic ? 1 : 0, true);
  dv.setUint32(16, K, true);
  dv.setUint32(20, rows, true);
  dv.setUint32(24, namesBytes, true);
  dv.setUint32(28, desc.length, true);
  const closes = new Float64Array(buf, A, rows);
  const days = new Int32Array(buf, A + 8 * rows, rows);
  let row = 0;
  let nameOff = 0;
  const namesAt = HEADER + ENTRY * K;
  for (let k = 0; k < K; k++) {
    const s = sorted[k];
    if (s.days.length !== s.closes.length) throw new StoreFormatError(`${s.ticker}: ${s.days.length} days but ${s.closes.length} closes`);
    const e = HEADER + ENTRY * k;
    dv.setUint32(e, row, true);
    dv.setUint32(e + 4, s.days.length, true);
    dv.setUint32(e + 8, nameOff, true);
    dv.setUint32(e + 12, names[k].length, true);
    u8.set(names[k], namesAt + nameOff);
    nameOff += names[k].length;
    days.set(s.days, row);
    closes.set(s.closes, row);
    row += s.days.length;
  }
  u8.set(desc, namesAt + namesBytes);
  u8.set(bodyDigest(u8), FIELDS);
  return u8;
}

/** Views over a store file's bytes. `bytes` must start at offset 0 of its ArrayBuffer (copied otherwise). */
export function decodeStore(input: Uint8Array): StoreContents {
  if (endianness() !== "LE") throw new StoreFormatError("the price store format is little-endian; this host is big-endian");
  const bytes = input.byteOffset === 0 ? input : input.slice();
  const buf = bytes.buffer as ArrayBuffer;
  if (bytes.length < FIELDS) throw new StoreFormatError("file too short for a price store header");
  for (let i = 0; i < 8; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i)) throw new StoreFormatError("not a Folio price store (bad magic)");
  }
  const dv = new DataView(buf, 0, bytes.length);
  const version = dv.getUint32(8, true);
  if (version !== 1 && version !== 2) {
    throw new StoreFormatError(`unsupported price store version ${version} (this build reads 1 and ${STORE_FORMAT_VERSION})`);
  }
  const HEADER = version === 2 ? HEADER_V2 : HEADER_V1;
  if (bytes.length < HEADER) throw new StoreFormatError("file too short for a price store header");
  const flags = dv.getUint32(12, true);
  const K = dv.getUint32(16, true);
  const R = dv.getUint32(20, true);
  const namesBytes = dv.getUint32(24, true);
  const descBytes = dv.getUint32(28, true);
  const namesAt = HEADER + ENTRY * K;
  const metaEnd = namesAt + namesBytes + descBytes;
  const A = Math.ceil(metaEnd / 8) * 8;
  if (bytes.length !== A + 12 * R) {
    throw new StoreFormatError(`corrupt price store: ${bytes.length} bytes, header implies ${A + 12 * R}`);
  }
  if (version === 2 && !bodyDigest(bytes).equals(bytes.subarray(FIELDS, FIELDS + DIGEST))) {
    throw new StoreFormatError("corrupt price store: the SHA-256 checksum does not match the contents");
  }
  const dec = new TextDecoder("utf-8", { fatal: true });
  const tickers: string[] = new Array(K);
  const starts = new Uint32Array(K);
  const counts = new Uint32Array(K);
  let expect = 0;
  for (let k = 0; k < K; k++) {
    const e = HEADER + ENTRY * k;
    starts[k] = dv.getUint32(e, true);
    counts[k] = dv.getUint32(e + 4, true);
    const off = dv.getUint32(e + 8, true);
    const len = dv.getUint32(e + 12, true);
    if (starts[k] !== expect || off + len > namesBytes) throw new StoreFormatError(`corrupt price store index at entry ${k}`);
    expect += counts[k];
    tickers[k] = dec.decode(bytes.subarray(namesAt + off, namesAt + off + len));
  }
  if (expect !== R) throw new StoreFormatError("corrupt price store index: row counts do not add up");
  const closes = new Float64Array(buf, A, R);
  const days = new Int32Array(buf, A + 8 * R, R);
  validateSeries(tickers, starts, counts, days, closes);
  return {
    synthetic: (flags & 1) === 1,
    description: dec.decode(bytes.subarray(namesAt + namesBytes, metaEnd)),
    tickers,
    starts,
    counts,
    closes,
    days,
  };
}

/**
 * Every close finite and in [MIN_CLOSE, MAX_CLOSE] (1e-150 to 1e150, the range an import accepts: outside it
 * valuation overflows), days strictly ascending within each ticker: a store breaking this is corrupt and
 * refused at open, so no bad stored value can surface later as a client error or a `null` in a response.
 */
function validateSeries(tickers: readonly string[], starts: Uint32Array, counts: Uint32Array, days: Int32Array, closes: Float64Array): void {
  for (let k = 0; k < tickers.length; k++) {
    const end = starts[k] + counts[k];
    for (let i = starts[k]; i < end; i++) {
      const c = closes[i];
      if (!(c >= MIN_CLOSE && c <= MAX_CLOSE)) {
        throw new StoreFormatError(`corrupt price store: ${JSON.stringify(tickers[k])} has close ${c} at row ${i - starts[k]} ` +
          `(closes must be finite and > 0, from ${MIN_CLOSE} to ${MAX_CLOSE}: docs/data.md "Validation rules")`);
      }
      if (i > starts[k] && days[i] <= days[i - 1]) {
        throw new StoreFormatError(`corrupt price store: ${JSON.stringify(tickers[k])} has days out of order at row ${i - starts[k]} (days must be strictly ascending)`);
      }
    }
  }
}
