/**
 * The analysis cards (issue 29; web/js/analysis.js): the significance table, the calendar year table and monthly
 * heat-map, the drawdown episodes, the factor exposures, the risk-contribution bars, the weights through time (top N +
 * others, tickers as rows) and the correlation heat-map with the dendrogram — in real headless Chromium against the
 * real server, at 1366 and 390 px, each figure on screen checked against the response and against a direct
 * computation from the paths' values. Screenshots go to test-output/analysis-*.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { describeWithChromium, launchChromium, openWithKey } from "../helpers/browser.js";

const KEY = "browser-test-key-analysis-0123456789ab";
const OUT = join(PROJECT_ROOT, "test-output");

type Sig = { PATH: string; base: string; sharpe: number; p_value: number | null; p_value_holm: number | null; sharpe_diff: number | null };
type Cal = { PATH: string; years: Record<string, number>; months: Record<string, number> };
type Dd = { PATH: string; episodes: { depth: number; peak: string; trough: string }[] };
type Att = { PATH: string; dates: string[]; windows: { risk_contributions: Record<string, number> }[]; clustering?: { order: string[]; linkage: number[][] } };
type Analysis = { body: Record<string, unknown>; ids: string[]; significance: Sig[]; calendar: Cal[]; drawdowns: Dd[]; attribution: Att[]; factors?: { PATH: string; betas: Record<string, number> }[] };
type Last = { ids: string[]; dates: string[]; values: number[][]; schedule: { dates: string[] } | null; tickers: string[] };
type W = { folio: { state: { analysis: Analysis; last: Last } } };

const pct1 = (x: number) => `${(x * 100).toFixed(1)}%`;

describeWithChromium("the analysis cards at 1366 and 390 px", () => {
  let server: RunningServer;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let all: string[];
  let picked: string[];

  const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);
  const sticking = () => page.evaluate(() => [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap"))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`).slice(0, 6));
  const analysis = () => page.evaluate(() => (window as unknown as W).folio.state.analysis);
  const last = () => page.evaluate(() => (window as unknown as W).folio.state.last);

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    all = (await openStore()).list().map((t) => t.ticker);
    picked = all.slice(0, 6);
    server = await startServer({
      env: { API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "1" },
      logger: false,
      print: () => {},
    });
    browser = await launchChromium();
    ({ page } = browser);
    await openWithKey(page, server.url, KEY);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("analyses a quarterly-rebalanced backtest with a factor: every card drawn from the response", async () => {
    for (const t of picked) {
      await page.fill("#ticker-search", t);
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    // herc and nco too (their clustering is drawn like hrp's)
    await page.locator('#strategy-picker input[value="herc"]').check();
    await page.selectOption("#rebalance", "quarterly");
    expect(await page.locator("#analysis-card").isVisible()).toBe(false);
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 90_000 }).toMatch(/^(Done|Failed)/);
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    expect(await page.locator("#analysis-card").isVisible()).toBe(true);
    expect(await page.locator("#analysis-results").isVisible()).toBe(false);
    await page.fill("#analysis-factors", all[7]);
    await page.fill("#analysis-risk-free", "2");
    await page.click("#analysis-run");
    await expect.poll(() => page.locator("#analysis-status").innerText(), { timeout: 120_000 }).toMatch(/^(Analysed|Failed)/);
    expect(await page.locator("#analysis-status").innerText()).toMatch(/^Analysed/);
    const a = await analysis();
    const l = await last();

    // significance: one row per displayed series (equal weight's three identical series as one), Holm ≥ raw p,
    // the verdict from the Holm p-value, the base marked
    const sigRows = page.locator("#significance tbody tr");
    const n = await sigRows.count();
    expect(n).toBe(a.significance.length - 2); // ewp d/w/m merged
    expect(await page.locator("#significance-note").innerText()).toMatch(/Holm-adjusted over the \d+ series/);
    expect(await page.locator("#significance-note").innerText()).toMatch(/risk-free rate of 2\.00%/);
    for (let k = 0; k < n; k++) {
      const id = await sigRows.nth(k).getAttribute("data-id");
      const s = a.significance.find((x) => x.PATH === id)!;
      const verdict = await sigRows.nth(k).locator("td.verdict").innerText();
      if (s.PATH === s.base) expect(verdict).toBe("base");
      else {
        expect(s.p_value_holm!).toBeGreaterThanOrEqual(s.p_value! - 1e-15);
        expect(verdict).toBe(s.p_value_holm! < 0.05 ? (s.sharpe_diff! > 0 ? "higher" : "lower") : "no evidence");
      }
      expect(await sigRows.nth(k).locator("td").nth(1).innerText()).toBe(s.sharpe.toFixed(2));
    }

    // calendar years: each cell the year's simple return computed directly from the paths' values
    const id0 = await sigRows.nth(1).getAttribute("data-id");
    const v = l.values[l.ids.indexOf(id0!)];
    const direct: Record<string, number> = {};
    let base = v[0];
    for (let t = 0; t < v.length; t++) {
      const y = l.dates[t].slice(0, 4);
      if (t === v.length - 1 || l.dates[t + 1].slice(0, 4) !== y) {
        direct[y] = v[t] / base - 1;
        base = v[t];
      }
    }
    const yrRow = page.locator(`#calendar-years tbody tr[data-id="${id0}"] td`);
    const years = Object.keys(direct);
    for (let k = 0; k < years.length; k++) expect(await yrRow.nth(k + 1).innerText()).toBe(pct1(direct[years[k]]));

    // the per-series views follow the picker
    await page.selectOption("#analysis-series", id0!);
    const cal = a.calendar.find((x) => x.PATH === id0)!;
    expect(await page.locator("#calendar-months").getAttribute("data-cells")).toBe(String(Object.keys(cal.months).length));
    expect(await page.locator("#calendar-months tbody tr").count()).toBe(years.length);
    // drawdowns: the deepest episode's depth is the maximum drawdown of the values, computed directly
    let peak = v[0];
    let mdd = 0;
    for (const x of v) {
      peak = Math.max(peak, x);
      mdd = Math.max(mdd, 1 - x / peak);
    }
    expect(await page.locator("#drawdowns tbody tr").first().locator("td").nth(1).innerText()).toBe(pct1(-mdd));

    // risk contributions: top 3 + others, summing to 100 %
    await page.fill("#analysis-top", "3");
    await page.locator("#analysis-top").dispatchEvent("change");
    const att = a.attribution.find((x) => x.PATH === id0)!;
    expect(await page.locator("#risk-bars").getAttribute("data-bars")).toBe("4");
    const rc = att.windows[0].risk_contributions;
    const sum = Object.values(rc).reduce((s, x) => s + x, 0);
    expect(Math.abs(sum - 1)).toBeLessThan(1e-9);
    const shown = await page.locator("#risk-bars .rc-value").allInnerTexts();
    const total = shown.reduce((s, t) => s + Number(t.split("%")[0]), 0);
    expect(Math.abs(total - 100)).toBeLessThan(0.25); // four 0.1 % roundings
    // another weights date redraws the bars from that date's contributions
    await page.selectOption("#analysis-date", "2");
    const top1 = Object.entries(att.windows[2].risk_contributions).sort((p, q) => Math.abs(q[1]) - Math.abs(p[1]))[0];
    expect(await page.locator("#risk-bars .rc-label").first().innerText()).toBe(top1[0]);
    expect(await page.locator("#risk-bars .rc-value").first().innerText()).toMatch(new RegExp(`^${pct1(top1[1]).replace(".", "\\.")}`));

    // weights through time: the schedule's dates, top 3 + others; the tickers-as-rows table
    expect(l.schedule).not.toBeNull();
    expect(await page.locator("#weights-area").getAttribute("data-dates")).toBe(String(l.schedule!.dates.length));
    expect(await page.locator("#weights-area").getAttribute("data-layers")).toBe("4");
    expect(await page.locator("#weights-area-legend .chip").count()).toBe(4);
    await page.locator("#weights-rows-details summary").click();
    expect(await page.locator("#weights-rows thead th").count()).toBe(2 + l.schedule!.dates.length);

    // factors: one row per displayed series, the factor's beta and t
    expect(await page.locator("#factors tbody tr").count()).toBe(n);
    expect(await page.locator("#factors thead").innerText()).toContain(`β ${all[7]}`);

    // clustering: hrp and herc series, the heat-map N × N under N − 1 links
    const clustered = a.attribution.filter((x) => x.clustering);
    expect(clustered.length).toBeGreaterThanOrEqual(6);
    expect(await page.locator("#analysis-cluster option").count()).toBe(clustered.length);
    expect(await page.locator("#correlation-map").getAttribute("data-n")).toBe(String(picked.length));
    expect(await page.locator("#correlation-map").getAttribute("data-links")).toBe(String(picked.length - 1));

    expect(await pageWidth(), JSON.stringify(await sticking())).toBeLessThanOrEqual(1366);
    await page.locator("#analysis-card").screenshot({ path: join(OUT, "analysis-1366.png") });
  }, 240_000);

  it("fits 390 px: nothing but the tables' own scrollers wider than the screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.dispatchEvent(new Event("resize")));
    await page.waitForTimeout(400);
    expect(await pageWidth(), JSON.stringify(await sticking())).toBeLessThanOrEqual(390);
    const w = await page.locator("#weights-area").evaluate((c) => c.getBoundingClientRect().right);
    expect(w).toBeLessThanOrEqual(390);
    await page.locator("#analysis-card").screenshot({ path: join(OUT, "analysis-390.png") });
  }, 60_000);

  it("takes a T-bill ticker as the risk-free rate (docs/method.md §7.6): sent as the ticker, named in the note", async () => {
    await page.setViewportSize({ width: 1366, height: 900 });
    const before = (await analysis()).significance.map((x) => x.sharpe);
    await page.fill("#analysis-risk-free", all[8]);
    await page.click("#analysis-run");
    await expect.poll(async () => (await analysis())?.body && (await analysis()).body, { timeout: 120_000 }).toMatchObject({ risk_free: all[8] });
    await expect.poll(() => page.locator("#analysis-status").innerText(), { timeout: 120_000 }).toMatch(/^(Analysed|Failed)/);
    expect(await page.locator("#analysis-status").innerText()).toMatch(/^Analysed/);
    expect(await page.locator("#significance-note").innerText()).toContain(`Excess of the daily returns of ${all[8]}`);
    const after = (await analysis()).significance.map((x) => x.sharpe);
    expect(after).not.toEqual(before);
  }, 180_000);

  it("clears the analysis when a new backtest runs, and hides the card outside paths", async () => {
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 90_000 }).toMatch(/^(Done|Failed)/);
    expect(await page.locator("#analysis-results").isVisible()).toBe(false);
    expect(await analysis()).toBeNull();
  }, 120_000);

  it("a 30-ticker universe: top 5 + others in the bars and the area, every ticker a row, a 30 × 30 correlation map", async () => {
    await page.setViewportSize({ width: 1366, height: 900 });
    for (const t of all.filter((x) => !picked.includes(x))) {
      await page.fill("#ticker-search", t);
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    for (const input of await page.locator("#strategy-picker input").all()) {
      const v = await input.getAttribute("value");
      if (["ewp", "hrp", "ivp"].includes(v!)) await input.check();
      else await input.uncheck();
    }
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 120_000 }).toMatch(/^(Done|Failed)/);
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    await page.fill("#analysis-risk-free", "");
    await page.fill("#analysis-factors", "");
    await page.click("#analysis-run");
    await expect.poll(() => page.locator("#analysis-status").innerText(), { timeout: 180_000 }).toMatch(/^(Analysed|Failed)/);
    expect(await page.locator("#analysis-status").innerText()).toMatch(/^Analysed/);
    await page.fill("#analysis-top", "5");
    await page.locator("#analysis-top").dispatchEvent("change");
    const a = await analysis();
    const l = await last();
    const id = await page.locator("#analysis-series").inputValue();
    const att = a.attribution.find((x) => x.PATH === id)!;
    const n = Object.keys(att.windows[0].risk_contributions).length;
    expect(n).toBe(all.length);
    expect(await page.locator("#risk-bars").getAttribute("data-bars")).toBe("6");
    const held = l.tickers.filter((_, i) => (l as unknown as { schedule: { series: Record<string, { weights: number[][] }> } })
      .schedule.series[id].weights.some((w) => w[i] !== 0)).length;
    expect(await page.locator("#weights-area").getAttribute("data-layers")).toBe(held > 5 ? "6" : String(held));
    await page.locator("#weights-rows-details").evaluate((d) => ((d as HTMLDetailsElement).open = true));
    expect(await page.locator("#weights-rows tbody tr").count()).toBe(held);
    expect(await page.locator("#correlation-map").getAttribute("data-n")).toBe(String(all.length));
    expect(await pageWidth(), JSON.stringify(await sticking())).toBeLessThanOrEqual(1366);
    await page.locator("#attribution-block").screenshot({ path: join(OUT, "analysis-30-bars-1366.png") });
    await page.locator("#weights-time-block").screenshot({ path: join(OUT, "analysis-30-weights-1366.png") });
    await page.locator("#clustering-block").screenshot({ path: join(OUT, "analysis-30-clustering-1366.png") });
  }, 300_000);
});
