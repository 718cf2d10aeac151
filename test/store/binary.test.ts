/**
 * The prices.folio format, version 2 (docs/data.md §2): a SHA-256 of the contents in the header, verified at open;
 * version-1 files (no checksum) still open; every close finite and > 0 and days strictly ascending, or the store
 * is refused at open — so a bad stored value can never reach a client.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import { startServer } from "../../src/http/server.js";
import { fileBackend } from "../../src/store/backend.js";
import { LiveStore } from "../../src/store/live.js";
import { decodeStore, encodeStore, STORE_FORMAT_VERSION, StoreFormatError } from "../../src/store/binary.js";
import type { TickerSeries } from "../../src/store/types.js";
import { TEST_LIMITS } from "../helpers/app.js";
import { commitBytes, commitStore, seededSeries } from "../helpers/stores.js";

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "folio-binary-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const series = (): TickerSeries[] => seededSeries(40, 3);
const encode = (s: readonly TickerSeries[]): Uint8Array => encodeStore(s, { synthetic: false, description: "test" });

/** The same contents in the version-1 layout: no digest slot, version field 1 (the data offset stays a multiple of 8). */
function asVersion1(v2: Uint8Array): Uint8Array {
  const out = new Uint8Array(v2.length - 32);
  out.set(v2.subarray(0, 32), 0);
  out.set(v2.subarray(64), 32);
  new DataView(out.buffer).setUint32(8, 1, true);
  return out;
}

function decodeError(bytes: Uint8Array): StoreFormatError | undefined {
  try {
    decodeStore(bytes);
    return undefined;
  } catch (e) {
    return e as StoreFormatError;
  }
}

describe("prices.folio version 2", () => {
  it("every writer writes version 2, and its contents decode back unchanged", () => {
    const s = series();
    const bytes = encode(s);
    expect(STORE_FORMAT_VERSION).toBe(2);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true)).toBe(2);
    const c = decodeStore(bytes);
    expect(c.tickers).toEqual(s.map((x) => x.ticker).sort());
    expect(Array.from(c.closes.subarray(c.starts[0], c.starts[0] + c.counts[0]))).toEqual(Array.from(s[0].closes));
    expect(Array.from(c.days.subarray(0, c.counts[0]))).toEqual(Array.from(s[0].days));
  });

  it("one flipped bit anywhere after the magic (header field, index, name, close or day) is refused by the checksum or the layout checks", () => {
    const bytes = encode(series());
    const positions = [12, 40, 64, 70, bytes.length - 1, bytes.length - 100, bytes.length - 500];
    for (const p of positions) {
      const bad = bytes.slice();
      bad[p] ^= 0x01;
      const err = decodeError(bad);
      expect(err, `byte ${p}`).toBeInstanceOf(StoreFormatError);
      expect(err?.message).toMatch(/corrupt|checksum|unsupported/);
    }
  });

  it("a flipped low bit of a close (still a plausible price) is caught by the checksum alone", () => {
    const bytes = encode(series());
    const c = decodeStore(bytes);
    const closeAt = c.closes.byteOffset + 8 * 10;
    const bad = bytes.slice();
    bad[closeAt] ^= 0x01;
    expect(decodeError(bad)?.message).toContain("SHA-256 checksum does not match");
  });

  it("a version-1 file (no checksum) still opens, with the same contents", () => {
    const v2 = encode(series());
    const v1 = asVersion1(v2);
    const a = decodeStore(v2);
    const b = decodeStore(v1);
    expect(b.tickers).toEqual(a.tickers);
    expect(Array.from(b.closes)).toEqual(Array.from(a.closes));
    expect(Array.from(b.days)).toEqual(Array.from(a.days));
    expect(b.description).toBe("test");
  });

  it("an unknown version is refused with its number", () => {
    const bytes = encode(series());
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(8, 3, true);
    expect(decodeError(bytes)?.message).toContain("unsupported price store version 3");
  });
});

describe("stored values are checked at open", () => {
  const withClose = (value: number, row = 5): TickerSeries[] => {
    const s = series();
    const closes = Float64Array.from(s[1].closes);
    closes[row] = value;
    s[1] = { ...s[1], closes };
    return s;
  };

  for (const [name, value] of [["NaN", NaN], ["+Infinity", Infinity], ["zero", 0], ["a negative close", -3.5]] as const) {
    it(`a store holding ${name} as a close (with a valid checksum, written by hand) is refused, naming the ticker`, () => {
      const s = withClose(value);
      const err = decodeError(encode(s));
      expect(err).toBeInstanceOf(StoreFormatError);
      expect(err?.message).toContain(JSON.stringify(s[1].ticker));
      expect(err?.message).toContain("finite and > 0");
    });
  }

  it("a version-1 store holding NaN is refused too (no checksum, the values are still checked)", () => {
    expect(decodeError(asVersion1(encode(withClose(NaN))))?.message).toContain("finite and > 0");
  });

  it("days that repeat or go backwards within a ticker are refused", () => {
    const s = series();
    const days = Int32Array.from(s[2].days);
    days[7] = days[6];
    s[2] = { ...s[2], days };
    expect(decodeError(encode(s))?.message).toContain("strictly ascending");
  });
});

describe("a corrupt store refuses to start", () => {
  it("the file backend refuses a flipped byte with a message naming prices.folio (not the absolute path)", async () => {
    const dir = tempDir();
    const bytes = encode(series());
    bytes[bytes.length - 3] ^= 0x10;
    commitBytes(dir, bytes);
    const err = await fileBackend(dir).load().then(() => undefined, (e: Error) => e);
    expect(err).toBeInstanceOf(StoreFormatError);
    expect(err?.message).toMatch(/^prices\.folio: corrupt price store/);
    expect(err?.message).not.toContain(dir);
  });

  it("the service does not start on a store holding a NaN close (so GET /v1/timeseries/X can never return null)", async () => {
    const dir = tempDir();
    commitBytes(dir, encode(withNaN()));
    const err = await buildApp({ config: { limits: TEST_LIMITS, keyHashes: [hashKey("k".repeat(20))], dataDir: dir }, logger: false })
      .then(async (app) => { await app.close(); return undefined; }, (e: Error) => e);
    expect(err).toBeInstanceOf(StoreFormatError);
    expect(err?.message).toContain("finite and > 0");
  });

  it("startServer rejects a corrupt store before listening", async () => {
    const dir = tempDir();
    const bytes = encode(series());
    bytes[100] ^= 0x01;
    commitBytes(dir, bytes);
    const err = await startServer({
      env: { API_KEYS: "k".repeat(20), DATA_DIR: dir, WORKERS: "1" },
      config: { port: 0 },
      logger: false,
    }).then(async (s) => { await s.close(); return undefined; }, (e: Error) => e);
    expect(err).toBeInstanceOf(StoreFormatError);
    expect(err?.message).toContain("prices.folio");
  });
});

describe("a corrupt store committed while serving", () => {
  it("a live reload of a file with a flipped byte or a NaN close keeps serving the previous version and logs why", async () => {
    const dir = tempDir();
    commitStore(dir, series());
    const warnings: string[] = [];
    const live = await LiveStore.open(fileBackend(dir), { log: { info: () => undefined, warn: (o) => warnings.push(JSON.stringify(o)) } });
    try {
      const hash = live.current.snapshot.version.hash;
      const flipped = encode(seededSeries(50, 3));
      flipped[flipped.length - 9] ^= 0x04;
      commitBytes(dir, flipped);
      expect(await live.reload()).toBe(false);
      commitBytes(dir, encode(withNaN()));
      expect(await live.reload()).toBe(false);
      expect(live.current.snapshot.version.hash).toBe(hash);
      expect(live.current.store.read(live.current.store.list()[0].ticker).days.length).toBe(40);
      expect(warnings.join()).toMatch(/checksum/);
      expect(warnings.join()).toMatch(/finite and > 0/);
    } finally {
      await live.close();
    }
  });
});

function withNaN(): TickerSeries[] {
  const s = series();
  const closes = Float64Array.from(s[0].closes);
  closes[3] = NaN;
  s[0] = { ...s[0], closes };
  return s;
}
