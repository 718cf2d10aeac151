/** The binary COPY codec of the PostgreSQL store (src/store/postgres/copy.ts), without a server. */
import { describe, expect, it } from "vitest";
import { copyHeader, copyTrailer, StoredArraysDecoder } from "../../../src/store/postgres/copy.js";

/** A binary COPY tuple (id int4, days int4[], closes float8[]) as PostgreSQL sends it. */
function tuple(id: number, days: number[], closes: number[]): Buffer {
  const arr = (vals: number[], oid: number, size: number): Buffer => {
    const b = Buffer.alloc(vals.length === 0 ? 12 : 20 + vals.length * (4 + size));
    b.writeInt32BE(vals.length === 0 ? 0 : 1, 0);
    b.writeInt32BE(0, 4);
    b.writeInt32BE(oid, 8);
    if (vals.length > 0) {
      b.writeInt32BE(vals.length, 12);
      b.writeInt32BE(1, 16);
      vals.forEach((v, i) => {
        const o = 20 + i * (4 + size);
        b.writeInt32BE(size, o);
        if (size === 4) b.writeInt32BE(v, o + 4);
        else b.writeDoubleBE(v, o + 4);
      });
    }
    return b;
  };
  const d = arr(days, 23, 4);
  const c = arr(closes, 701, 8);
  const head = Buffer.alloc(2 + 8 + 4);
  head.writeInt16BE(3, 0);
  head.writeInt32BE(4, 2);
  head.writeInt32BE(id, 6);
  head.writeInt32BE(d.length, 10);
  const cl = Buffer.alloc(4);
  cl.writeInt32BE(c.length, 0);
  return Buffer.concat([head, d, cl, c]);
}

describe("StoredArraysDecoder", () => {
  const stream = Buffer.concat([copyHeader(), tuple(7, [18263, 18264, 18267], [10.5, 0.1 + 0.2, 1e-300]), tuple(9, [], []), tuple(3, [1], [Number.MAX_VALUE]), copyTrailer()]);

  it("decodes every tuple bit-exactly whatever the chunk boundaries (1 byte, 7 bytes, all at once)", () => {
    for (const size of [1, 7, stream.length]) {
      const dec = new StoredArraysDecoder();
      for (let o = 0; o < stream.length; o += size) dec.push(stream.subarray(o, o + size));
      dec.finish();
      expect(dec.series.map((s) => ({ id: s.id, days: Array.from(s.days), closes: Array.from(s.closes) }))).toEqual([
        { id: 7, days: [18263, 18264, 18267], closes: [10.5, 0.1 + 0.2, 1e-300] },
        { id: 9, days: [], closes: [] },
        { id: 3, days: [1], closes: [Number.MAX_VALUE] },
      ]);
    }
  });

  it("refuses a truncated stream, a bad signature and arrays of different lengths", () => {
    const dec = new StoredArraysDecoder();
    dec.push(stream.subarray(0, stream.length - 2));
    expect(() => dec.finish()).toThrow(/truncated/);
    expect(() => new StoredArraysDecoder().push(Buffer.alloc(40))).toThrow(/bad signature/);
    const bad = Buffer.concat([copyHeader(), tuple(1, [1, 2], [3]), copyTrailer()]);
    expect(() => new StoredArraysDecoder().push(bad)).toThrow(/2 days but 1 closes/);
  });
});
