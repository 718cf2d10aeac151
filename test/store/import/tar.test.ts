/**
 * `folio import` of tar archives (.tar, .tar.gz, .tgz) of CSV files: the archives are written byte by byte here
 * (512-byte ustar headers with their checksums), then imported as they are, without unpacking.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importPrices } from "../../../src/store/import/index.js";
import { looksLikeTar, TarFormatError, tarMembers } from "../../../src/store/import/tar.js";
import { openStore } from "../../../src/store/index.js";
import { describeWithSharedData, sharedDataPath } from "../../helpers/shared-data.js";

const enc = new TextEncoder();

/** One 512-byte ustar header: name (or prefix + name), octal size, type flag, checksum over the header. */
function header(name: string, size: number, type = "0", prefix = ""): Uint8Array {
  const h = new Uint8Array(512);
  const put = (s: string, at: number) => h.set(enc.encode(s), at);
  put(name, 0);
  put("0000644\0", 100);
  put("0000000\0", 108);
  put("0000000\0", 116);
  put(size.toString(8).padStart(11, "0") + "\0", 124);
  put("00000000000\0", 136);
  put(type, 156);
  put("ustar\0", 257);
  put("00", 263);
  put(prefix, 345);
  h.fill(0x20, 148, 156);
  const sum = h.reduce((a, b) => a + b, 0);
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  return h;
}

type Entry = { name: string; text?: string; type?: string; prefix?: string };

/** A tar archive of the entries (regular files by default), padded, with the two zero end blocks. */
function tar(entries: Entry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const data = enc.encode(e.text ?? "");
    parts.push(header(e.name, data.length, e.type ?? "0", e.prefix ?? ""));
    const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
    padded.set(data);
    parts.push(padded);
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const yahoo = (ticker: string, rows: [string, number][]) =>
  "Date,Open,High,Low,Close,Adj Close,Volume,Name\n" + rows.map(([d, c]) => `${d},1,1,1,${c + 1},${c},100,${ticker}`).join("\n") + "\n";

const AAA = yahoo("AAA", [["2020-01-02", 10], ["2020-01-03", 11]]);
const BBB = yahoo("BBB", [["2020-01-02", 20], ["2020-01-03", 21], ["2020-01-06", 22]]);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "folio-tar-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("tarMembers", () => {
  it("lists the regular files with their paths (ustar prefix, pax path, GNU long name) and skips other entries", () => {
    const long = `deep/${"x".repeat(120)}.csv`;
    // A pax record is "<length> path=<value>\n", the length counting itself (3 digits here), the space and the newline.
    const pax = `${long.length + 10} path=${long}\n`;
    const b = tar([
      { name: "data/", type: "5" },
      { name: "a.csv", text: "hello", prefix: "data" },
      { name: "PaxHeader", type: "x", text: pax },
      { name: "ignored-name", text: "long one" },
      { name: "././@LongLink", type: "L", text: "gnu/long-name.csv\0" },
      { name: "trunc", text: "gnu" },
      { name: "link.csv", type: "2" },
    ]);
    const members = tarMembers(b);
    expect(members.map((m) => m.path)).toEqual(["data/a.csv", long, "gnu/long-name.csv"]);
    expect(new TextDecoder().decode(members[0].data)).toBe("hello");
    expect(looksLikeTar(b)).toBe(true);
    expect(looksLikeTar(enc.encode("Date,AAA\n".repeat(100)))).toBe(false);
  });

  it("refuses a damaged header and a truncated member", () => {
    const b = tar([{ name: "a.csv", text: "x".repeat(1000) }]);
    const bad = b.slice();
    bad[0] ^= 1;
    expect(() => tarMembers(bad)).toThrow(TarFormatError);
    expect(() => tarMembers(bad)).toThrow(/bad header checksum at byte 0/);
    expect(() => tarMembers(b.subarray(0, 1024))).toThrow(/truncated tar archive/);
  });
});

describe("importing a tar archive of CSV files", () => {
  it("imports every CSV member of a .tar.gz (hidden members and other files skipped), naming them archive/member", async () => {
    const archive = join(dir, "prices.tar.gz");
    writeFileSync(archive, gzipSync(tar([
      { name: "stock_data/", type: "5" },
      { name: "stock_data/AAA_data.csv", text: AAA },
      { name: "stock_data/._AAA_data.csv", text: "\0\u0005\u0016\u0007 resource fork" },
      { name: "stock_data/failed_queries.txt", text: "ZZZ\n" },
      { name: "stock_data/BBB_data.csv", text: BBB },
    ])));
    const report = await importPrices(join(dir, "store"), [archive]);
    expect(report.rejected).toEqual([]);
    expect(report.files.map((f) => f.file)).toEqual([`${archive}/stock_data/AAA_data.csv`, `${archive}/stock_data/BBB_data.csv`]);
    expect(report.files.every((f) => f.format === "yahoo")).toBe(true);
    const store = await openStore({ dataDir: join(dir, "store") });
    expect(store.list()).toEqual([
      { ticker: "AAA", first: "2020-01-02", last: "2020-01-03", count: 2 },
      { ticker: "BBB", first: "2020-01-02", last: "2020-01-06", count: 3 },
    ]);
    expect(Array.from(store.read("BBB").closes)).toEqual([20, 21, 22]);
  });

  it("reads .tar, .tgz and gzip-compressed members, and archives found in a directory", async () => {
    writeFileSync(join(dir, "a.tar"), tar([{ name: "AAA.csv", text: AAA }]));
    const sub = join(dir, "in");
    mkdirSync(sub);
    // A gzip-compressed member (binary, so written here rather than through `tar`, which takes text).
    const gz = gzipSync(enc.encode(BBB));
    const h = header("BBB.csv.gz", gz.length);
    const body = new Uint8Array(Math.ceil(gz.length / 512) * 512);
    body.set(gz);
    const withGz = new Uint8Array(512 + body.length + 1024);
    withGz.set(h, 0);
    withGz.set(body, 512);
    writeFileSync(join(sub, "b.tgz"), gzipSync(withGz));
    const report = await importPrices(join(dir, "store"), [join(dir, "a.tar"), sub]);
    expect(report.rejected).toEqual([]);
    expect(report.tickers).toEqual(["AAA", "BBB"]);
  });

  it("reports a problem row at archive/member:line like any file", async () => {
    const archive = join(dir, "bad.tar.gz");
    writeFileSync(archive, gzipSync(tar([{ name: "d/AAA.csv", text: AAA.replace("2020-01-03", "2020-13-03") }])));
    const report = await importPrices(join(dir, "store"), [archive]);
    expect(report.ok).toBe(false);
    expect(report.rejected[0]).toMatchObject({ file: `${archive}/d/AAA.csv`, line: 3 });
    expect(report.rejected[0].reason).toMatch(/invalid date "2020-13-03"/);
  });

  it("says what is wrong with an archive holding no CSV, a damaged archive, and a tar archive under a CSV name", async () => {
    const none = join(dir, "none.tar.gz");
    writeFileSync(none, gzipSync(tar([{ name: "readme.txt", text: "hi" }])));
    expect((await importPrices(join(dir, "s1"), [none])).rejected).toEqual([{ file: none, line: 0, reason: "archive holds no .csv or .csv.gz file" }]);
    const damaged = join(dir, "damaged.tar.gz");
    const bytes = tar([{ name: "AAA.csv", text: AAA }]);
    bytes[10] ^= 0xff;
    writeFileSync(damaged, gzipSync(bytes));
    const r2 = await importPrices(join(dir, "s2"), [damaged]);
    expect(r2.rejected[0]).toMatchObject({ file: damaged, line: 0 });
    expect(r2.rejected[0].reason).toMatch(/not a tar archive: bad header checksum/);
    const misnamed = join(dir, "prices.csv.gz");
    writeFileSync(misnamed, gzipSync(tar([{ name: "AAA.csv", text: AAA }])));
    const r3 = await importPrices(join(dir, "s3"), [misnamed]);
    expect(r3.rejected).toHaveLength(1);
    expect(r3.rejected[0].reason).toMatch(/tar archive: name it \.tar, \.tar\.gz or \.tgz/);
    // One short line, not kilobytes of escaped NUL bytes.
    expect(r3.rejected[0].reason.length).toBeLessThan(200);
  });
});

describeWithSharedData("importing the kaggle-sp500-5yr tarball as it is", () => {
  it("imports its 489 Yahoo files straight from the .tar.gz, as from the unpacked directory", async () => {
    const tarball = sharedDataPath("kaggle-sp500-5yr", "stock_data_adjclose_2012-12_2017-12.tar.gz");
    const report = await importPrices(join(dir, "kaggle"), [tarball]);
    expect(report.rejected).toEqual([]);
    expect(report.files).toHaveLength(489);
    expect(report.files[0].file).toBe(`${tarball}/stock_data/AAL_data.csv`);
    expect(new Set(report.files.map((f) => f.format))).toEqual(new Set(["yahoo"]));
    expect(report.duplicates).toBe(2);
    const store = await openStore({ dataDir: join(dir, "kaggle") });
    const list = store.list();
    expect(list).toHaveLength(489);
    expect(list.filter((t) => t.count === 1260)).toHaveLength(465);
    expect(list.find((t) => t.ticker === "AAPL")).toMatchObject({ first: "2012-12-06", last: "2017-12-06", count: 1260 });
  }, 120_000);
});
