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

/** Encode the first `n` import tuples of the given columns (days are epoch days; converted to PostgreSQL dates here). */
export function encodeImportTuples(n: number, ids: Int32Array, days: Int32Array, closes: Float64Array, files: Int32Array, lines: Int32Array): Buffer {
  const b = Buffer.allocUnsafe(n * IMPORT_TUPLE);
  let o = 0;
  for (let i = 0; i < n; i++) {
    b.writeInt16BE(5, o);
    b.writeInt32BE(4, o + 2);
    b.writeInt32BE(ids[i], o + 6);
    b.writeInt32BE(4, o + 10);
    b.writeInt32BE(days[i] - PG_EPOCH_DAY, o + 14);
    b.writeInt32BE(8, o + 18);
    b.writeDoubleBE(closes[i], o + 22);
    b.writeInt32BE(4, o + 30);
    b.writeInt32BE(files[i], o + 34);
    b.writeInt32BE(4, o + 38);
    b.writeInt32BE(lines[i], o + 42);
    o += IMPORT_TUPLE;
  }
  return b;
}

/** Encode the first `n` stored tuples `(ticker_id int4, date, close float8)` (days are epoch days). */
export function encodeCloseTuples(n: number, ids: Int32Array, days: Int32Array, closes: Float64Array): Buffer {
  const b = Buffer.allocUnsafe(n * STORED_TUPLE);
  let o = 0;
  for (let i = 0; i < n; i++) {
    b.writeInt16BE(3, o);
    b.writeInt32BE(4, o + 2);
    b.writeInt32BE(ids[i], o + 6);
    b.writeInt32BE(4, o + 10);
    b.writeInt32BE(days[i] - PG_EPOCH_DAY, o + 14);
    b.writeInt32BE(8, o + 18);
    b.writeDoubleBE(closes[i], o + 22);
    o += STORED_TUPLE;
  }
  return b;
}

/**
 * Streaming decoder of stored tuples `(int4, int4, float8)`, none NULL. Feed chunks in order; rows land in growable
 * columns. Throws on anything else (a schema this build does not know).
 */
export class StoredTupleDecoder {
  ids = new Int32Array(1 << 16);
  days = new Int32Array(1 << 16);
  closes = new Float64Array(1 << 16);
  n = 0;
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
      if (len - o < STORED_TUPLE) break;
      if (fields !== 3 || dv.getInt32(o + 2) !== 4 || dv.getInt32(o + 10) !== 4 || dv.getInt32(o + 18) !== 8) {
        throw new Error("binary COPY: unexpected tuple layout");
      }
      if (this.n === this.ids.length) this.grow();
      this.ids[this.n] = dv.getInt32(o + 6);
      this.days[this.n] = dv.getInt32(o + 14);
      this.closes[this.n] = dv.getFloat64(o + 22);
      this.n++;
      o += STORED_TUPLE;
    }
    this.carry = o < buf.length ? Buffer.from(buf.subarray(o)) : Buffer.alloc(0);
  }

  /** Checks the stream ended with the trailer. */
  finish(): void {
    if (!this.ended || this.carry.length > 0) throw new Error("binary COPY: truncated stream");
  }

  private grow(): void {
    const cap = this.ids.length * 2;
    const i = new Int32Array(cap);
    i.set(this.ids);
    const d = new Int32Array(cap);
    d.set(this.days);
    const c = new Float64Array(cap);
    c.set(this.closes);
    this.ids = i;
    this.days = d;
    this.closes = c;
  }
}
