/**
 * PostgreSQL's binary COPY format, for the two bulk paths of the store (docs/data.md §4): import rows
 * `(ticker_id int4, date date, close float8, file int4, line int4)` sent with COPY FROM STDIN, and stored rows
 * `(ticker_id int4, day int4, close float8)` read with COPY TO STDOUT. Binary keeps every close bit-exact and
 * skips text formatting and parsing of 10 M numbers.
 *
 * Layout (PostgreSQL documentation, "COPY", binary format): 11-byte signature `PGCOPY\n\377\r\n\0`, int32 flags,
 * int32 header-extension length (+ extension); per tuple an int16 field count, then per field an int32 byte length
 * (-1 for NULL) and the value in network byte order; an int16 -1 trailer. A `date` is int32 days since 2000-01-01.
 */

const SIGNATURE = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]);
/** Days from 1970-01-01 to 2000-01-01 (PostgreSQL's date epoch). */
export const PG_EPOCH_DAY = 10957;
/** Bytes of one import tuple: 2 + (4+4) + (4+4) + (4+8) + (4+4) + (4+4). */
const IMPORT_TUPLE = 46;
/** Bytes of one stored tuple: 2 + (4+4) + (4+4) + (4+8). */
const STORED_TUPLE = 30;

export function copyHeader(): Buffer {
  const b = Buffer.alloc(19);
  SIGNATURE.copy(b, 0);
  // flags 0, extension length 0
  return b;
}

export function copyTrailer(): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(-1, 0);
  return b;
}

/**
 * Encode the first `n` tuples `(ticker_id int4, date, close float8)` (days are epoch days, converted to PostgreSQL
 * dates here), followed by `(file int4, line int4)` when `source` is given (the import's staging rows).
 */
export function encodeTuples(n: number, ids: Int32Array, days: Int32Array, closes: Float64Array,
  source?: { files: Int32Array; lines: Int32Array }): Buffer {
  const size = source ? IMPORT_TUPLE : STORED_TUPLE;
  const b = Buffer.allocUnsafe(n * size);
  let o = 0;
  for (let i = 0; i < n; i++) {
    b.writeInt16BE(source ? 5 : 3, o);
    b.writeInt32BE(4, o + 2);
    b.writeInt32BE(ids[i], o + 6);
    b.writeInt32BE(4, o + 10);
    b.writeInt32BE(days[i] - PG_EPOCH_DAY, o + 14);
    b.writeInt32BE(8, o + 18);
    b.writeDoubleBE(closes[i], o + 22);
    if (source) {
      b.writeInt32BE(4, o + 30);
      b.writeInt32BE(source.files[i], o + 34);
      b.writeInt32BE(4, o + 38);
      b.writeInt32BE(source.lines[i], o + 42);
    }
    o += size;
  }
  return b;
}

/** One stored ticker as read back: its id, days (epoch days) and closes. */
export interface StoredSeries {
  id: number;
  days: Int32Array;
  closes: Float64Array;
}

/**
 * Streaming decoder of per-ticker tuples `(ticker_id int4, days int4[], closes float8[])`, none NULL (the load
 * query aggregates each ticker's rows into two arrays: 2 000 tuples instead of 10 M, which PostgreSQL sends about
 * twice as fast). Array binary layout: int32 ndim (0 for an empty array), int32 has-null flag, int32 element type oid,
 * per dimension int32 size and int32 lower bound, then per element int32 length and the value. Throws on anything
 * else (a schema this build does not know).
 */
export class StoredArraysDecoder {
  readonly series: StoredSeries[] = [];
  private carry: Buffer = Buffer.alloc(0);
  private headerDone = false;
  private ended = false;

  push(chunk: Buffer): void {
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    let o = 0;
    if (!this.headerDone) {
      if (buf.length < 19) {
        this.carry = buf;
        return;
      }
      if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new Error("binary COPY: bad signature");
      const ext = buf.readInt32BE(15);
      if (buf.length < 19 + ext) {
        this.carry = buf;
        return;
      }
      o = 19 + ext;
      this.headerDone = true;
    }
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const len = buf.length;
    while (!this.ended && len - o >= 2) {
      const fields = dv.getInt16(o);
      if (fields === -1) {
        this.ended = true;
        o += 2;
        break;
      }
      if (fields !== 3) throw new Error("binary COPY: unexpected tuple layout");
      // The whole tuple must be here: id field, then two length-prefixed arrays.
      if (len - o < 2 + 8 + 4) break;
      if (dv.getInt32(o + 2) !== 4) throw new Error("binary COPY: unexpected tuple layout");
      const daysAt = o + 10;
      const daysLen = dv.getInt32(daysAt);
      if (daysLen < 0) throw new Error("binary COPY: unexpected NULL");
      const closesAt = daysAt + 4 + daysLen;
      if (len - closesAt < 4) break;
      const closesLen = dv.getInt32(closesAt);
      if (closesLen < 0) throw new Error("binary COPY: unexpected NULL");
      const end = closesAt + 4 + closesLen;
      if (len < end) break;
      const id = dv.getInt32(o + 6);
      const days = readInt4Array(dv, daysAt + 4);
      const closes = readFloat8Array(dv, closesAt + 4);
      if (days.length !== closes.length) throw new Error(`binary COPY: ticker id ${id} has ${days.length} days but ${closes.length} closes`);
      this.series.push({ id, days, closes });
      o = end;
    }
    this.carry = o < buf.length ? Buffer.from(buf.subarray(o)) : Buffer.alloc(0);
  }

  /** Checks the stream ended with the trailer. */
  finish(): void {
    if (!this.ended || this.carry.length > 0) throw new Error("binary COPY: truncated stream");
  }
}

function arrayHeader(dv: DataView, p: number, elemLen: number): { n: number; at: number } {
  const ndim = dv.getInt32(p);
  if (ndim === 0) return { n: 0, at: p + 12 };
  if (ndim !== 1 || dv.getInt32(p + 4) !== 0) throw new Error("binary COPY: unexpected array layout");
  const n = dv.getInt32(p + 12);
  const at = p + 20;
  if (n > 0 && dv.getInt32(at) !== elemLen) throw new Error("binary COPY: unexpected array element");
  return { n, at };
}

function readInt4Array(dv: DataView, p: number): Int32Array {
  const { n, at } = arrayHeader(dv, p, 4);
  const out = new Int32Array(n);
  for (let i = 0, q = at + 4; i < n; i++, q += 8) out[i] = dv.getInt32(q);
  return out;
}

function readFloat8Array(dv: DataView, p: number): Float64Array {
  const { n, at } = arrayHeader(dv, p, 8);
  const out = new Float64Array(n);
  for (let i = 0, q = at + 4; i < n; i++, q += 12) out[i] = dv.getFloat64(q);
  return out;
}
