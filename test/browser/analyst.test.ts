/**
 * The page an analyst keeps open (issue 21): own portfolios and a benchmark, the weights card with rebalancing,
 * axis labels, Cancel with elapsed time, the sims drift and block length, and the layout at 1366 and 390 px — in real
 * headless Chromium against the real server (as test/browser/web.test.ts). Screenshots go to test-output/.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { STRATEGY_REGISTRY } from "../../src/domain/strategies.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { describeWithChromium, launchChromium, openWithKey } from "../helpers/browser.js";

const KEY = "browser-test-key-analyst-0123456789";
const OUT = join(PROJECT_ROOT, "test-output");

type Chart = { series: { show: boolean; width: number; stroke: unknown; label: string }[]; scales: { y: { distr: number } } };
type Folio = { folio: { state: { charts: Chart[]; axisLabels: Record<string, (string | null)[]> } } };

/** "$1.25M" → 1250000 (the page's compact dollar labels). */
function parseMoney(s: string): number {
  const m = /^(-?)\$(\d+(?:\.\d+)?)([KMB]?)$/.exec(s);
  if (!m) throw new Error(`not a dollar label: ${s}`);
  return (m[1] ? -1 : 1) * Number(m[2]) * ({ "": 1, K: 1e3, M: 1e6, B: 1e9 } as Record<string, number>)[m[3]];
}

/** Plain-JS beta, correlation and tracking error of daily log-returns (docs/method.md §7.3), for the check. */
function relative(v: number[], b: number[]) {
  const r = v.slice(1).map((x, t) => Math.log(x / v[t]));
  const q = b.slice(1).map((x, t) => Math.log(x / b[t]));
  const m = r.length;
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const mr = mean(r);
  const mq = mean(q);
  let c = 0;
  let vr = 0;
  let vq = 0;
  for (let t = 0; t < m; t++) {
    c += (r[t] - mr) * (q[t] - mq);
    vr += (r[t] - mr) ** 2;
    vq += (q[t] - mq) ** 2;
  }
  const d = r.map((x, t) => x - q[t]);
  const md = mean(d);
  const te = Math.sqrt(d.reduce((a, x) => a + (x - md) ** 2, 0) / (m - 1)) * Math.sqrt(252);
  return { beta: c / vq, correlation: c / Math.sqrt(vr * vq), tracking_error: te };
}

describeWithChromium("the analyst's page: own portfolios, a benchmark, axes, cancel, 1366 and 390 px", () => {
  let server: RunningServer;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let tickers: string[];
  let bench: string;
  let all: string[];

  const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);
  const sticking = () => page.evaluate(() => [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap"))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`).slice(0, 6));
  const summaryFits = () => page.locator("#summary").evaluate((t) => {
    const wrap = t.parentElement!;
    return { scroll: wrap.scrollWidth, client: wrap.clientWidth };
  });
  const runAndWait = async () => {
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 60_000 }).toMatch(/^(Done|Failed|Cancelled)/);
  };

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const list = (await openStore()).list();
    all = list.map((t) => t.ticker);
    tickers = [all[0], all[1], all[2]];
    bench = all[all.length - 1];
    server = await startServer({
      env: { API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "1" },
      logger: false,
      print: () => {},
    });
    browser = await launchChromium({ acceptDownloads: true });
    ({ page } = browser);
    await openWithKey(page, server.url, KEY);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("says visibly that the server's data are synthetic (/v1/info synthetic: true)", async () => {
    const info = (await (await fetch(`${server.url}/v1/info`, { headers: { "x-api-key": KEY } })).json()) as { synthetic: boolean };
    expect(info.synthetic).toBe(true);
    const note = page.locator("#data-note");
    await expect.poll(() => note.isVisible()).toBe(true);
    expect(await note.innerText()).toMatch(/^Synthetic data, not market prices\./);
  });

  it("fits the default summary table (11 columns) into a 1366 px screen without sideways scrolling", async () => {
    for (const t of tickers) {
      await page.fill("#ticker-search", t);
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    await runAndWait();
    expect(await page.locator("#summary thead th").count()).toBe(11);
    const fit = await summaryFits();
    expect(fit.scroll, JSON.stringify(fit)).toBeLessThanOrEqual(fit.client);
    expect(await pageWidth()).toBeLessThanOrEqual(1366);
  });

  it("labels the y axes exactly: no blank log tick written as $0, distinct linear ticks, each label its tick's value", async () => {
    const labels = () => page.evaluate(() => (window as unknown as Folio).folio.state.axisLabels);
    const ticksOf = () => page.evaluate(() => {
      const u = (window as unknown as { folio: { state: { charts: { axes: { _splits?: number[] }[] }[] } } }).folio.state.charts[0];
      return u.axes[1]._splits ?? null;
    });
    for (const scale of ["linear", "log"]) {
      if (scale === "log") await page.check("#log-scale");
      await expect.poll(() => page.locator("#chart").getAttribute("data-scale")).toBe(scale);
      const main = (await labels()).chart;
      const shown = main.filter((l): l is string => l != null);
      expect(shown.length, JSON.stringify(main)).toBeGreaterThanOrEqual(2);
      expect(new Set(shown).size, JSON.stringify(main)).toBe(shown.length);
      expect(shown, JSON.stringify(main)).not.toContain("$0");
      const splits = await ticksOf();
      if (splits) {
        main.forEach((l, k) => {
          if (l != null) expect(Math.abs(parseMoney(l) - splits[k]) / splits[k], `${l} vs ${splits[k]}`).toBeLessThan(1e-9);
        });
      }
      for (const panel of ["drawdown-chart", "rolling-chart"]) {
        const p = (await labels())[panel].filter((l): l is string => l != null);
        expect(new Set(p).size, JSON.stringify(p)).toBe(p.length);
        for (const l of p) expect(l).toMatch(/^-?\d+(\.\d+)?%$/);
      }
      await page.locator("#chart-card").screenshot({ path: join(OUT, `analyst-axes-${scale}.png`) });
    }
    await page.uncheck("#log-scale");
  });

  it("edits two own portfolios (normalise), picks a benchmark, and keeps both in the URL and in the browser", async () => {
    await page.click("#portfolio-add");
    const first = page.locator('.pf[data-portfolio="0"]');
    await first.locator(".pf-name").fill("core");
    await first.locator(".pf-add").selectOption(tickers[0]);
    await first.locator(".pf-add").selectOption(tickers[1]);
    await first.locator(`.pf-row[data-ticker="${tickers[0]}"] .pf-weight`).fill("60");
    await first.locator(`.pf-row[data-ticker="${tickers[1]}"] .pf-weight`).fill("40");
    expect(await first.locator(".pf-sum").innerText()).toMatch(/^Sum 100: press Normalise/);
    await first.locator(".pf-normalise").click();
    expect(await first.locator(`.pf-row[data-ticker="${tickers[0]}"] .pf-weight`).inputValue()).toBe("0.6");
    expect(await first.locator(`.pf-row[data-ticker="${tickers[1]}"] .pf-weight`).inputValue()).toBe("0.4");
    expect(await first.locator(".pf-sum").innerText()).toBe("Sum 1 ✓");
    await page.click("#portfolio-add");
    const second = page.locator('.pf[data-portfolio="1"]');
    await second.locator(".pf-name").fill("solo");
    await second.locator(".pf-add").selectOption(tickers[2]);
    await second.locator(`.pf-row[data-ticker="${tickers[2]}"] .pf-weight`).fill("1");
    // the benchmark picker offers every ticker of the store
    expect(await page.locator("#benchmark-list option").count()).toBe(all.length);
    await page.fill("#benchmark", bench);
    await runAndWait();
    expect(await page.locator("#error").isHidden()).toBe(true);
    const url = new URL(page.url());
    expect(url.searchParams.getAll("portfolio")).toEqual([`core=${tickers[0]}:0.6,${tickers[1]}:0.4`, `solo=${tickers[2]}:1`]);
    expect(url.searchParams.get("benchmark")).toBe(bench);
    const stored = JSON.parse((await page.evaluate(() => localStorage.getItem("folio.portfolios")))!);
    expect(stored.map((p: { name: string }) => p.name)).toEqual(["core", "solo"]);
    // Round trip: the URL alone (the browser's copy removed) restores the editor and the benchmark, and runs.
    const other = await browser!.context.newPage();
    try {
      await other.setViewportSize({ width: 1366, height: 900 });
      await other.goto(server.url + "/");
      await other.evaluate(() => localStorage.removeItem("folio.portfolios"));
      await other.goto(url.toString());
      await expect.poll(() => other.locator("#chart").getAttribute("data-series-count"), { timeout: 30_000 }).toBe("22");
      expect(await other.locator(".pf .pf-name").evaluateAll((es) => es.map((e) => (e as HTMLInputElement).value))).toEqual(["core", "solo"]);
      expect(await other.locator('.pf[data-portfolio="0"] .pf-weight').evaluateAll((es) => es.map((e) => (e as HTMLInputElement).value))).toEqual(["0.6", "0.4"]);
      expect(await other.locator("#benchmark").inputValue()).toBe(bench);
      // and a reload without portfolio parameters brings the browser's copy back
      await other.evaluate(() => localStorage.setItem("folio.portfolios", JSON.stringify([{ name: "kept", weights: [["X", "1"]] }])));
      await other.goto(server.url + "/");
      await expect.poll(() => other.locator(".pf .pf-name").evaluateAll((es) => es.map((e) => (e as HTMLInputElement).value))).toEqual(["kept"]);
      await expect.poll(() => other.locator('.pf-row[data-ticker="X"]').getAttribute("class")).toContain("pf-missing");
    } finally {
      await other.close();
    }
  });

  it("draws own portfolios and the benchmark distinctly: their legend section, thicker lines, colours no strategy has", async () => {
    expect(await page.locator("#chart").getAttribute("data-series-count")).toBe("22");
    const own = page.locator("#legend-body .legend-own .lg-own");
    expect(await own.evaluateAll((bs) => bs.map((b) => b.getAttribute("aria-label")))).toEqual(["Portfolio core", "Portfolio solo", `Benchmark ${bench}`]);
    expect(await own.allInnerTexts()).toEqual(["Portfolio core", "Portfolio solo", `Benchmark ${bench}`]);
    expect(await page.locator("#legend-body .lg-item").count()).toBe(19);
    const series = await page.evaluate(() => {
      const u = (window as unknown as Folio).folio.state.charts[0];
      // uPlot keeps a series' stroke as a function of (chart, series index)
      return u.series.map((s, i) => ({ label: s.label, width: s.width,
        stroke: String(typeof s.stroke === "function" ? (s.stroke as (u: unknown, i: number) => string)(u, i) : s.stroke) })).slice(1);
    });
    const strategyColours = STRATEGY_REGISTRY.map((r) => r.colour.toLowerCase());
    const strategies = series.filter((s) => !/^(Portfolio|Benchmark) /.test(s.label));
    const others = series.filter((s) => /^(Portfolio|Benchmark) /.test(s.label));
    expect(others.map((s) => s.label)).toEqual(["Portfolio core", "Portfolio solo", `Benchmark ${bench}`]);
    const thickest = Math.max(...strategies.map((s) => s.width));
    for (const s of others) {
      expect(s.width).toBeGreaterThan(thickest);
      expect(strategyColours).not.toContain(s.stroke.toLowerCase());
    }
    expect(new Set(others.map((s) => s.stroke)).size).toBe(3);
    // hiding one from the legend hides it in every panel
    await own.nth(1).click();
    expect(await page.evaluate(() => (window as unknown as Folio).folio.state.charts.map((c) => c.series.filter((s) => s.label === "Portfolio solo")[0].show)))
      .toEqual([false, false, false]);
    await own.nth(1).click();
    await page.locator("#chart-card").screenshot({ path: join(OUT, "analyst-own-1366-chart.png") });
  });

  it("shows the relative figures in the summary, equal to a plain computation from the returned values", async () => {
    // (the capture ratios' headers carry their basis on a second line: the labels are the first)
    const heads = (await page.locator("#summary thead th").allInnerTexts()).map((h) => h.split("\n")[0]);
    expect((await page.locator("#summary thead th").allInnerTexts()).filter((h) => h.endsWith("capture\ndaily"))).toHaveLength(2);
    for (const h of ["Beta", "Alpha", "Tracking error", "Info ratio", "Correlation", "Up capture", "Down capture"]) expect(heads).toContain(h);
    const body = { tickers, benchmark: bench, portfolios: { core: { [tickers[0]]: 0.6, [tickers[1]]: 0.4 }, solo: { [tickers[2]]: 1 } } };
    const paths = (await (await fetch(`${server.url}/v1/optimiser/paths`, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify(body),
    })).json()) as Record<string, string>[];
    const values = (id: string) => {
      const row = paths.find((p) => p.PATH === id)!;
      return Object.keys(row).filter((k) => k !== "PATH").map((d) => Number(row[d]));
    };
    const b = values(`benchmark.${bench}`);
    const col = (name: string) => heads.indexOf(name);
    for (const id of ["portfolio.core", "l1r.l2d.l3gmvp", `benchmark.${bench}`]) {
      const cells = await page.locator(`#summary tbody tr[data-strategy="${id}"] td`).allInnerTexts();
      const want = relative(values(id), b);
      expect(Number(cells[col("Beta")])).toBeCloseTo(want.beta, 2);
      expect(Number(cells[col("Correlation")])).toBeCloseTo(want.correlation, 2);
      expect(Number(cells[col("Tracking error")].replace("%", "")) / 100).toBeCloseTo(want.tracking_error, 4);
    }
    // the benchmark against itself: beta 1, correlation 1, no tracking error (information ratio undefined)
    const self = await page.locator(`#summary tbody tr[data-strategy="benchmark.${bench}"] td`).allInnerTexts();
    expect([self[col("Beta")], self[col("Correlation")], self[col("Tracking error")], self[col("Info ratio")]]).toEqual(["1.00", "1.00", "0.00%", "—"]);
    // still fits 1366 px: the tail-risk group starts hidden and can be shown
    const fit = await summaryFits();
    expect(fit.scroll, JSON.stringify(fit)).toBeLessThanOrEqual(fit.client);
    expect(await page.locator('#summary-columns input[data-group="tail"]').isChecked()).toBe(false);
    await page.locator('#summary-columns input[data-group="tail"]').check();
    expect(await page.locator("#summary thead th.g-tail").first().isVisible()).toBe(true);
    await page.locator('#summary-columns input[data-group="tail"]').uncheck();
    expect(await page.locator("#summary thead th.g-tail").first().isVisible()).toBe(false);
    // the weights table has the portfolios' rows too
    expect(await page.locator('#weights tbody tr[data-strategy="portfolio.core"]').count()).toBe(1);
    await page.screenshot({ path: join(OUT, "analyst-own-1366.png"), fullPage: true });
    await page.locator("#summary-card").screenshot({ path: join(OUT, "analyst-summary-1366.png") });
  });

  it("names real series ids in the Table CSV (equal weight once per frequency, never l1r.l2*.l3ewp)", async () => {
    const [dl] = await Promise.all([page.waitForEvent("download"), page.click("#summary-download")]);
    const path = join(OUT, dl.suggestedFilename());
    await dl.saveAs(path);
    const lines = readFileSync(path, "utf8").trim().split("\n");
    const ids = lines.slice(1).map((l) => l.split(",")[0]);
    expect(ids.slice(0, 3)).toEqual(["l1r.l2d.l3ewp", "l1r.l2w.l3ewp", "l1r.l2m.l3ewp"]);
    expect(ids.slice(-3)).toEqual(["portfolio.core", "portfolio.solo", `benchmark.${bench}`]);
    for (const id of ids) expect(id).toMatch(/^(l1r\.l2[dwm]\.l3[a-z]+|portfolio\.[A-Za-z0-9_-]+|benchmark\.\S+)$/);
    expect(lines[0].split(",")).toContain("beta");
    expect(lines[0].split(",")).toContain("sortino"); // hidden on screen, in the CSV
  });

  it("with rebalancing, the Weights card shows the weights traded on each date of the schedule (POST /v1/optimiser/schedule)", async () => {
    await page.selectOption("#rebalance", "monthly");
    await runAndWait();
    expect(await page.locator("#weights-title").innerText()).toMatch(/^Weights traded on \d{4}-\d{2}-\d{2} \(purchase\), monthly schedule$/);
    const res = await fetch(`${server.url}/v1/optimiser/paths`, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify({ tickers, rebalance: "monthly" }),
    });
    const count = res.headers.get("x-rebalance-count");
    expect(Number(count)).toBeGreaterThan(0);
    // the picker: the purchase and every rebalance date
    expect(await page.locator("#weights-date option").count()).toBe(Number(count) + 1);
    const sched = await (await fetch(`${server.url}/v1/optimiser/schedule`, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify({ tickers, rebalance: "monthly" }),
    })).json() as { dates: string[]; series: Record<string, { weights: number[][] }> };
    await page.selectOption("#weights-date", "3");
    expect(await page.locator("#weights-title").innerText()).toBe(`Weights traded on ${sched.dates[3]} (rebalance 3 of ${count}), monthly schedule`);
    // the gmvp row (daily) shows the schedule's weights of that date, in percent
    const w = sched.series["l1r.l2d.l3gmvp"].weights[3];
    const row = page.locator("#weights tbody tr", { hasText: "gmvp" }).first();
    const text = await row.innerText();
    expect(text).toContain(`${(w[0] * 100).toFixed(2)}%`);
    // with a benchmark the relative figures are shown and the trade columns start hidden (one click shows them)
    expect(await page.locator("#summary-columns input[data-group='trades']").isChecked()).toBe(false);
    expect(await page.locator("#summary thead th.g-trades").first().isVisible()).toBe(false);
    expect(await page.locator("#summary thead th.g-trades").count()).toBe(3);
    const fit = await summaryFits();
    expect(fit.scroll, JSON.stringify(fit)).toBeLessThanOrEqual(fit.client);
    await page.selectOption("#rebalance", "none");
    await runAndWait();
    expect(await page.locator("#weights-title").innerText()).toMatch(/^Weights bought on \d{4}-\d{2}-\d{2}$/);
    expect(await page.locator("#rebalance-dates").isHidden()).toBe(true);
  });

  it("offers drift and block length for sims (from /v1/info), sends them, keeps them in the URL; box-plot ticks are nice", async () => {
    const info = (await (await fetch(`${server.url}/v1/info`, { headers: { "x-api-key": KEY } })).json()) as {
      options: { drift: string[]; block_length: { min: number; max: number } };
    };
    await page.check('input[name="mode"][value="sims"]');
    expect(await page.locator("#drift option").evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(info.options.drift);
    expect(await page.locator("#block-length").isDisabled()).toBe(true);
    await page.selectOption("#model", "bootstrap");
    expect(await page.locator("#block-length").isDisabled()).toBe(false);
    expect(await page.locator("#block-length").getAttribute("max")).toBe(String(info.options.block_length.max));
    await page.selectOption("#drift", "zero");
    await page.fill("#block-length", "5");
    await page.fill("#run-count", "6");
    await page.fill("#seed", "9");
    const sent = page.waitForRequest((r) => r.url().endsWith("/v1/optimiser/sims/summary"));
    await runAndWait();
    const body = JSON.parse((await sent).postData()!);
    expect(body).toMatchObject({ model: "bootstrap", drift: "zero", block_length: 5, benchmark: bench, run_count: 6 });
    expect(body.portfolios).toBeDefined();
    const url = new URL(page.url());
    expect([url.searchParams.get("drift"), url.searchParams.get("block_length")]).toEqual(["zero", "5"]);
    expect(await page.locator("#error").isHidden()).toBe(true);
    // the box plots: nice ticks with equal steps, no negative dollars, the start line labelled
    const canvas = page.locator("#dist-chart");
    expect(await canvas.getAttribute("data-rows")).toBe("22");
    const ticks = (JSON.parse((await canvas.getAttribute("data-ticks"))!) as string[]).map(parseMoney);
    for (const t of ticks) expect(t).toBeGreaterThanOrEqual(0);
    const step = ticks[1] - ticks[0];
    const mantissa = step / 10 ** Math.floor(Math.log10(step));
    expect([1, 2, 2.5, 5].some((m) => Math.abs(m - mantissa) < 1e-9), String(step)).toBe(true);
    for (let k = 1; k < ticks.length; k++) expect(ticks[k] - ticks[k - 1]).toBeCloseTo(step, 6);
    if (ticks[0] <= 100_000 && ticks[ticks.length - 1] >= 100_000) expect(await canvas.getAttribute("data-start-label")).toBe("start $100K");
    // relative figures over runs in the sims summary
    expect(await page.locator("#summary thead th").allInnerTexts()).toContain("Beta");
    await page.screenshot({ path: join(OUT, "analyst-sims-1366.png"), fullPage: true });
  });

  it("shows the elapsed time of a long request and cancels it: the fetch is aborted, the old results stay, marked", async () => {
    await page.selectOption("#model", "independent");
    await page.selectOption("#drift", "historical");
    await page.fill("#benchmark", "");
    for (const t of all.slice(3, 30)) {
      await page.fill("#ticker-search", t);
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    await page.selectOption("#rebalance", "monthly");
    await page.fill("#run-count", "100");
    const aborted: string[] = [];
    page.on("requestfailed", (r) => aborted.push(`${new URL(r.url()).pathname} ${r.failure()?.errorText}`));
    await page.click("#run");
    await expect.poll(() => page.locator("#cancel").isVisible()).toBe(true);
    await expect.poll(() => page.locator("#run-status").innerText()).toMatch(/^Running sims for 30 tickers… \d+\.\d s · 100 runs on the server$/);
    await page.waitForTimeout(700);
    expect(await page.locator("#run-status").innerText()).toMatch(/… (0\.[5-9]|[1-9]\d*\.\d) s/);
    await page.screenshot({ path: join(OUT, "analyst-running.png") });
    await page.click("#cancel");
    await expect.poll(() => page.locator("#run-status").innerText()).toMatch(/^Cancelled after \d+\.\d s\.$/);
    expect(await page.locator("#cancel").isHidden()).toBe(true);
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(await page.locator("#results").getAttribute("data-stale")).toBe("cancelled");
    expect(await page.locator("#stale-note").innerText()).toMatch(/^The run was cancelled\./);
    expect(aborted.some((a) => a.startsWith("/v1/optimiser/sims/summary") && /ERR_ABORTED/.test(a)), aborted.join("; ")).toBe(true);
    // the server is free again: a small run goes through
    await page.selectOption("#rebalance", "none");
    await page.fill("#run-count", "3");
    await runAndWait();
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    expect(await page.locator("#results").getAttribute("data-stale")).toBeNull();
  });

  it("fits 390 px with own portfolios and a benchmark: no sideways scrolling, the legend smaller than the chart", async () => {
    // back to the three tickers, paths, with the portfolios and the benchmark
    for (const t of all.slice(3, 30)) await page.locator(`#selected .chip[data-ticker="${t}"] button`).click();
    await page.check('input[name="mode"][value="paths"]');
    await page.fill("#benchmark", bench);
    await page.setViewportSize({ width: 390, height: 844 });
    await runAndWait();
    await expect.poll(() => page.locator("#chart").getAttribute("data-series-count")).toBe("22");
    await page.evaluate(() => {
      (document.getElementById("legend") as HTMLDetailsElement).open = true;
    });
    await page.waitForTimeout(200);
    await page.screenshot({ path: join(OUT, "analyst-own-390.png"), fullPage: true });
    await page.locator("#chart-card").screenshot({ path: join(OUT, "analyst-own-390-chart.png") });
    expect(await pageWidth(), (await sticking()).join("; ")).toBeLessThanOrEqual(390);
    const h = await page.evaluate(() => ({
      legend: document.getElementById("legend")!.getBoundingClientRect().height,
      chart: document.getElementById("chart")!.getBoundingClientRect().height,
    }));
    expect(h.legend).toBeLessThan(h.chart);
    // legend readable: every own entry inside the screen, text at least 12 px
    const own = await page.locator("#legend-body .lg-own").evaluateAll((bs) => bs.map((b) => {
      const r = b.getBoundingClientRect();
      return { right: r.right, font: parseFloat(getComputedStyle(b).fontSize) };
    }));
    expect(own).toHaveLength(3);
    for (const o of own) {
      expect(o.right).toBeLessThanOrEqual(390);
      expect(o.font).toBeGreaterThanOrEqual(12);
    }
    const labels = await page.evaluate(() => (window as unknown as Folio).folio.state.axisLabels.chart.filter((l) => l != null));
    expect(new Set(labels).size).toBe(labels.length);
    await page.setViewportSize({ width: 1366, height: 900 });
  });
});
