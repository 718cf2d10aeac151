/**
 * Price store benchmarks: import throughput (rows/s, cells/s) for the two large real datasets, store open time,
 * and alignment time; plus the synthetic universe's generation. Real-data tasks skip with a printed reason when
 * ../shared/data is absent.
 *
 *   store:import:cvx:n=430:t=2518      folio import of cvxportfolio-sp500/prices.csv (wide, 1.08 M cells), written
 *   store:import:kaggle:n=489:t=1260   folio import of the 489 per-ticker Yahoo files of kaggle-sp500-5yr (608 k rows)
 *   store:open:*                       openStore({ dataDir }) of the resulting stores (read + views + index)
 *   align:*                            alignPrices over every ticker (inner join + PriceMatrix of numbers)
 *   store:open:n=2000:t=5000           opening a generated 120 MB store (the "thousands of tickers × decades" case)
 *   rss:*                              resident memory of the service (file backend, that 120 MB store) at 2 and 8
 *                                      workers: one copy per worker (`sharedStore: false`, the layout before the
 *                                      shared snapshot: every worker held a private copy, plus the main thread's)
 *                                      and one shared copy per process (the default)
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Bench } from "tinybench";
import { alignArrays, alignPrices } from "../../src/pipeline/align.js";
import { encodeStore, STORE_FILE } from "../../src/store/binary.js";
import { openStore, openSyntheticStore, syntheticStoreBytes } from "../../src/store/index.js";
import { importPrices, type ImportReport } from "../../src/store/import/index.js";
import { medianMs, printBench } from "../table.js";

function sharedData(): string | undefined {
  // ../shared/data beside the project: found from the source, from dist/bench/suites, or from the working directory.
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, "../../..", "shared", "data"), resolve(here, "../../../..", "shared", "data"), resolve(process.cwd(), "..", "shared", "data")];
  return candidates.find((p) => existsSync(join(p, "cvxportfolio-sp500", "prices.csv")));
}

/**
 * The service in a child process (so that nothing else of this bench is in its memory): build the app on the file
 * backend, wait for the workers, give every worker one computation at once (so each has received the store), run a
 * GC on the main thread, then report VmRSS from /proc/self/status.
 */
const RSS_CHILD = `
const [appUrl, configUrl, dataDir, workers, shared] = process.argv.slice(1);
const { buildApp } = await import(appUrl);
const { hashKey } = await import(configUrl);
const W = Number(workers);
const limits = { bodyLimitBytes: 65536, maxTickers: 500, maxRunCount: 100, maxResponseValues: 1e7, computeTimeoutMs: 600000,
  workers: W, queueSize: 64, ratePerMinute: 1e6 };
const app = await buildApp({ config: { limits, keyHashes: [hashKey("x".repeat(16))], dataDir }, logger: false, web: false,
  sharedStore: shared === "1" });
await app.folio.pool.ready();
const snapshot = app.folio.live.current.snapshot;
const request = { tickers: ["T0000", "T0500", "T1000", "T1500"], start: "2000-01-01" };
await Promise.all(Array.from({ length: W }, () => app.folio.pool.run({ kind: "weights", request, snapshot }).catch(() => undefined)));
const seen = new Set(app.folio.pool.threadIds).size;
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 500));
const rss = Number(/VmRSS:\\s+(\\d+)/.exec((await import("node:fs")).readFileSync("/proc/self/status", "utf8"))[1]) * 1024;
process.stdout.write(JSON.stringify({ rss, threads: seen, bytes: snapshot.bytes.byteLength }) + "\\n");
await app.close();
process.exit(0);
`;

function serviceRss(dataDir: string, workers: number, shared: boolean): Promise<{ rss: number; threads: number; bytes: number }> {
  const appUrl = new URL("../../src/http/app.js", import.meta.url).href;
  const configUrl = new URL("../../src/config.js", import.meta.url).href;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", RSS_CHILD, appUrl, configUrl, dataDir, String(workers), shared ? "1" : "0"],
      { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) reject(new Error(`rss child exited ${code}: ${out.slice(0, 300)}`));
      else resolvePromise(JSON.parse(line) as { rss: number; threads: number; bytes: number });
    });
  });
}

export async function rssByWorkers(dataDir: string): Promise<void> {
  if (process.platform !== "linux") {
    console.log("\n[skip] rss: reads /proc/self/status (Linux only)");
    return;
  }
  const rows = [];
  for (const workers of [2, 8]) {
    const before = await serviceRss(dataDir, workers, false);
    const after = await serviceRss(dataDir, workers, true);
    rows.push({
      workers,
      "store MB": (after.bytes / 1e6).toFixed(0),
      "RSS MB, a copy per worker": (before.rss / 1e6).toFixed(0),
      "RSS MB, one shared copy": (after.rss / 1e6).toFixed(0),
      "saved MB": ((before.rss - after.rss) / 1e6).toFixed(0),
    });
  }
  console.log("\n## rss: the service on a 2000 × 5000 file store, after one computation per worker");
  console.table(rows);
}

export default async function store(): Promise<void> {
  const sink: number[] = [];
  const consume = (x: number): void => {
    if (!Number.isFinite(x)) throw new Error("non-finite result");
    sink.push(x);
  };

  const syn = new Bench({ time: 300, warmupTime: 50 });
  syn.add("store:synthetic:generate+encode:n=30:t=1554", () => consume(syntheticStoreBytes().length));
  syn.add("store:synthetic:open:n=30:t=1554", () => consume(openSyntheticStore().list().length));
  const synStore = openSyntheticStore();
  const synTickers = synStore.list().map((t) => t.ticker);
  syn.add("align:synthetic:n=30:t=1554", () => consume(alignPrices(synStore, synTickers).closes[0][0]));
  await syn.run();
  printBench("Synthetic universe (generated in memory at open)", syn);

  // Scale: a store of 2000 tickers × 5000 days (10 M closes, 120 MB), written once, then opened.
  const big = mkdtempSync(join(tmpdir(), "folio-bench-big-"));
  try {
    const days = Int32Array.from({ length: 5000 }, (_, t) => 10000 + t);
    const series = Array.from({ length: 2000 }, (_, k) => ({
      ticker: `T${String(k).padStart(4, "0")}`,
      days,
      closes: Float64Array.from(days, (d) => 50 + ((d * 7 + k * 13) % 101) / 4),
    }));
    writeFileSync(join(big, STORE_FILE), encodeStore(series, { synthetic: false, description: "" }));
    const scale = new Bench({ time: 0, iterations: 5, warmup: false });
    scale.add("store:open:n=2000:t=5000", async () => consume((await openStore({ dataDir: big })).list().length));
    await scale.run();
    printBench("Open a large store: 2000 tickers × 5000 days (120 MB)", scale);
    await rssByWorkers(big);
  } finally {
    rmSync(big, { recursive: true, force: true });
  }

  const data = sharedData();
  if (!data) {
    console.log("\n[skip] real-data import/open/align tasks: ../shared/data not found");
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), "folio-bench-store-"));
  try {
    const kaggleSrc = join(tmp, "kaggle-src");
    mkdirSync(kaggleSrc);
    execFileSync("tar", ["xzf", join(data, "kaggle-sp500-5yr", "stock_data_adjclose_2012-12_2017-12.tar.gz"), "-C", kaggleSrc]);
    const sets = [
      { name: "cvx:n=430:t=2518", inputs: [join(data, "cvxportfolio-sp500", "prices.csv")], dir: join(tmp, "cvx") },
      { name: "kaggle:n=489:t=1260", inputs: [join(kaggleSrc, "stock_data")], dir: join(tmp, "kaggle") },
    ];

    const imp = new Bench({ time: 0, iterations: 3, warmup: false });
    const reports = new Map<string, ImportReport>();
    for (const s of sets) {
      imp.add(`store:import:${s.name}`, async () => {
        const r = await importPrices(s.dir, s.inputs);
        if (!r.ok) throw new Error(`import failed: ${r.rejected[0]?.reason}`);
        reports.set(s.name, r);
        consume(r.closes);
      });
    }
    await imp.run();
    printBench("Import (parse + validate + write the store atomically), 3 runs each", imp);
    const rows = sets.map((s) => {
      const r = reports.get(s.name)!;
      const sec = medianMs(imp, `store:import:${s.name}`) / 1000;
      return { set: s.name, files: r.files.length, rows: r.rows, closes: r.closes, "rows/s": Math.round(r.rows / sec), "closes/s": Math.round(r.closes / sec) };
    });
    console.table(rows);

    const open = new Bench({ time: 400, warmupTime: 100 });
    for (const s of sets) {
      open.add(`store:open:${s.name}`, async () => consume((await openStore({ dataDir: s.dir })).list().length));
    }
    const cvx = await openStore({ dataDir: sets[0].dir });
    const cvxTickers = cvx.list().map((t) => t.ticker);
    open.add("align:typed:n=430:t=2518", () => consume(alignArrays(cvx, cvxTickers).closes[0]));
    open.add("align:matrix:n=430:t=2518", () => consume(alignPrices(cvx, cvxTickers).closes[0][0]));
    open.add("align:matrix:n=20:t=2518", () => consume(alignPrices(cvx, cvxTickers.slice(0, 20)).closes[0][0]));
    await open.run();
    printBench("Open the on-disk store (incl. list()), align every ticker", open);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
