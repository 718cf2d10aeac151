/**
 * The web page in real headless Chromium (Debian's `chromium`, driven by playwright-core), against the real server
 * started in-process on 127.0.0.1 with an ephemeral port and a known key, at desktop (1280 px) and phone (390 px)
 * widths. Screenshots go to test-output/.
 *
 * Without /usr/bin/chromium this suite skips with a printed reason; in CI (CI set) it fails instead
 * (.ci/apt-packages lists chromium, so .ci/run installs it).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { describeWithChromium, launchChromium } from "../helpers/browser.js";

const KEY = "browser-test-key-0123456789abcdef";
const OUT = join(PROJECT_ROOT, "test-output");

/** The 19 rows the page shows: strategy order, then d/w/m; ewp once (identical at every frequency). */
const DISPLAY_IDS = ["ewp", "gmvp", "hrp", "ivp", "mdcp", "mdp", "rpp"].flatMap((s) =>
  (s === "ewp" ? ["d"] : ["d", "w", "m"]).map((f) => `l1r.l2${f}.l3${s}`));

type Win = { folio: { state: { charts: { series: { show: boolean }[]; scales: { y: { distr: number } } }[] } } };

describeWithChromium("the web page in headless Chromium", () => {
  let server: RunningServer;
  let context: BrowserContext;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let tickers: string[];
  let last: string;

  const heights = () => page.evaluate(() => ({
    legend: document.getElementById("legend")!.getBoundingClientRect().height,
    chart: document.getElementById("chart")!.getBoundingClientRect().height,
  }));
  const noSideScroll = () => page.evaluate(() => document.documentElement.scrollWidth);
  /** Elements sticking out of the viewport on the right (outside the tables' own scroll boxes), for messages. */
  const sticking = () => page.evaluate(() => [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap"))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`).slice(0, 6));
  const rowIds = () => page.locator("#summary tbody tr").evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.strategy));

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const store = await openStore();
    const list = store.list();
    tickers = [list[0].ticker, list[list.length - 1].ticker, list[Math.floor(list.length / 2)].ticker];
    last = list[0].last;
    server = await startServer({
      env: { API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "1" },
      logger: false,
      print: () => {},
    });
    browser = await launchChromium({ acceptDownloads: true });
    ({ context, page } = browser);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("loads the page, its scripts and the chart library from this server only", async () => {
    const external: string[] = [];
    const failed: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(server.url)) external.push(r.url());
    });
    page.on("requestfailed", (r) => failed.push(`${r.url()} ${r.failure()?.errorText}`));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const res = await page.goto(server.url + "/");
    expect(res?.status()).toBe(200);
    await expect.poll(() => page.evaluate(() => typeof (window as unknown as { folio?: unknown }).folio)).toBe("object");
    expect(await page.title()).toContain("Folio");
    // No key yet (fresh profile): the ticker search waits for one.
    expect(await page.locator("#ticker-search").isDisabled()).toBe(true);
    expect(external).toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("checks a wrong API key with the server, shows the 401, and neither says saved nor stores it", async () => {
    await page.fill("#api-key", "not-the-right-key-at-all");
    await page.click("#key-save");
    const error = page.locator("#error");
    await error.waitFor({ state: "visible" });
    await expect.poll(() => error.innerText()).toMatch(/Invalid API key \(401 INVALID_API_KEY\)[\s\S]*does not match any configured key/);
    await expect.poll(() => page.locator("#key-status").innerText()).toMatch(/rejected this key \(401\): it was not saved/);
    expect(await page.locator("#key-status").innerText()).not.toMatch(/Key saved/);
    expect(await page.evaluate(() => localStorage.getItem("folio.apiKey"))).toBeNull();
    expect(await page.locator("#ticker-search").isDisabled()).toBe(true);
  });

  it("removes a stored key the server rejects, and says so", async () => {
    await page.evaluate(() => localStorage.setItem("folio.apiKey", "a-key-that-was-revoked-000000"));
    await page.reload();
    await expect.poll(() => page.locator("#key-status").innerText()).toMatch(/rejected the saved key \(401\): it was removed/);
    expect(await page.evaluate(() => localStorage.getItem("folio.apiKey"))).toBeNull();
  });

  it("takes a good key once after checking it, keeps it in the browser, and lists the tickers", async () => {
    await page.fill("#api-key", KEY);
    await page.click("#key-save");
    await page.locator(".ticker-option").first().waitFor();
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(await page.locator("#key-status").innerText()).toMatch(/^Key saved in this browser \(Folio .*, \d+ tickers\)\.$/);
    expect(await page.evaluate(() => localStorage.getItem("folio.apiKey"))).toBe(KEY);
    // After a reload the stored key is used without asking again.
    await page.reload();
    await page.locator(".ticker-option").first().waitFor();
    expect(await page.locator(".ticker-option").count()).toBeGreaterThan(0);
  });

  it("builds the covariance, HRP and model selects from the server's /v1/info options, defaults selected", async () => {
    const info = (await (await fetch(`${server.url}/v1/info`, { headers: { "x-api-key": KEY } })).json()) as {
      options: { covariance: string[]; hrp: string[]; model: string[]; defaults: Record<string, string | number> };
    };
    for (const name of ["covariance", "hrp", "model"] as const) {
      const select = page.locator(`#${name}`);
      await expect.poll(() => select.isEnabled()).toBe(true);
      expect(await select.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(info.options[name]);
      expect(await select.inputValue()).toBe(info.options.defaults[name]);
    }
    expect(await page.locator("#run-count").getAttribute("placeholder")).toBe(String(info.options.defaults.run_count));
  });

  it("takes the option lists and defaults from /v1/info (a server with other lists gets other selects)", async () => {
    expect(await page.locator("#covariance option").evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(["sample", "shrink", "ledoit-wolf"]);
    const other = await context.newPage();
    try {
      await other.route("**/v1/info", async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as Record<string, unknown>;
        body.options = { covariance: ["sample", "shrink", "future"], hrp: ["paper"], model: ["independent", "correlated"],
          defaults: { covariance: "shrink" } };
        await route.fulfill({ response: res, json: body });
      });
      await other.goto(server.url + "/");
      await expect.poll(() => other.locator("#covariance option").count()).toBe(3);
      expect(await other.locator("#covariance").inputValue()).toBe("shrink");
      expect(await other.locator("#hrp option").count()).toBe(1);
    } finally {
      await other.close();
    }
  });

  it("says that no ticker matches an unknown search, and Enter adds nothing", async () => {
    await page.fill("#ticker-search", "zzz-nope");
    await expect.poll(() => page.locator("#no-match").innerText()).toMatch(/^No ticker matches “zzz-nope”/);
    await page.press("#ticker-search", "Enter");
    expect(await page.locator("#selected .chip").count()).toBe(0);
    expect(await page.locator("#no-match").isVisible()).toBe(true);
    await page.fill("#ticker-search", "");
    expect(await page.locator("#no-match").count()).toBe(0);
  });

  it("runs paths: 19 curves (one ewp), drawdown and rolling panels, a compact legend with visible dash styles", async () => {
    for (const t of tickers) {
      await page.fill("#ticker-search", t.toLowerCase());
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    expect(await page.locator("#selected .chip").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.ticker))).toEqual(tickers);
    await page.click("#run");
    await page.locator("#chart[data-series-count]").waitFor();
    expect(await page.locator("#chart").getAttribute("data-series-count")).toBe("19");
    // Main chart + drawdown + rolling panel, cursor-synchronised.
    expect(await page.locator("#chart canvas, #drawdown-chart canvas, #rolling-chart canvas").count()).toBe(3);
    expect(await page.evaluate(() => (window as unknown as Win).folio.state.charts.length)).toBe(3);
    // The legend: 7 strategy rows, ewp with one entry, and each frequency drawn with its own dash pattern.
    expect(await page.locator("#legend-body .lg-name").count()).toBe(7);
    expect(await page.locator("#legend-body .lg-item").count()).toBe(19);
    const dashes = await page.locator("#legend-body .lg-freq").evaluateAll((bs) =>
      bs.map((b) => [(b as HTMLElement).dataset.freq, b.querySelector("line")?.getAttribute("stroke-dasharray") ?? "solid"]));
    expect(dashes.map((d) => d[0])).toEqual(["d", "w", "m"]);
    expect(new Set(dashes.map((d) => d[1])).size).toBe(3);
    expect(await page.locator("#legend-body .lg-name").allInnerTexts()).toContain("Global minimum variance (gmvp)");
    const before = await heights();
    expect(before.legend).toBeLessThan(before.chart);
    // Hovering the chart writes one readout line; the legend does not grow.
    await page.locator("#chart").scrollIntoViewIfNeeded();
    const box = (await page.locator("#chart .u-over").boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
    await expect.poll(() => page.locator("#readout").innerText()).toMatch(/^\d{4}-\d{2}-\d{2} · .+: \$[\d,]+\.\d{2} · drawdown -?\d+\.\d{2}%$/);
    expect((await heights()).legend).toBe(before.legend);
    // Summary and weights: 19 rows in display order, full names.
    expect(await rowIds()).toEqual(DISPLAY_IDS);
    expect(await page.locator("#summary tbody tr").nth(0).locator("td").first().innerText()).toBe("Equal weight (ewp)");
    expect(await page.locator("#summary tbody tr").nth(2).locator("td").first().innerText()).toBe("Global minimum variance (gmvp) · Weekly");
    expect(await page.locator("#weights tbody tr").count()).toBe(19);
    expect(await page.locator("#weights thead th").allInnerTexts()).toEqual(["Strategy", ...tickers, "Allocation"]);
    // The page's summary is the same computation as POST /v1/optimiser/report (one shared module).
    const report = (await page.evaluate(async ([key, body]) => {
      const r = await fetch("/v1/optimiser/report", {
        method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body),
      });
      return r.json();
    }, [KEY, { tickers }] as const)) as { PATH: string; final_value: number; sharpe: number | null; max_drawdown: number;
      sortino: number | null; calmar: number | null; var_95: number; cvar_95: number }[];
    expect(report.map((r) => r.PATH)).toEqual([...STRATEGY_IDS]);
    const shown = await page.locator("#summary tbody tr").evaluateAll((rows) =>
      rows.map((r) => [(r as HTMLElement).dataset.strategy, ...Array.from(r.querySelectorAll("td"), (td) => td.textContent ?? "")]));
    for (const row of shown) {
      const r = report.find((x) => x.PATH === row[0])!;
      expect(Number(row[2]!.replace(/[$,]/g, ""))).toBeCloseTo(r.final_value, 2);
      expect(row[6]).toBe(r.sharpe === null ? "—" : r.sharpe.toFixed(2));
      expect(row[7]).toBe(`${(r.max_drawdown * 100).toFixed(2)}%`);
      expect(row[8]).toBe(r.sortino === null ? "—" : r.sortino.toFixed(2));
      expect(row[9]).toBe(r.calmar === null ? "—" : r.calmar.toFixed(2));
      expect(row[10]).toBe(`${(r.var_95 * 100).toFixed(2)}%`);
      expect(row[11]).toBe(`${(r.cvar_95 * 100).toFixed(2)}%`);
    }
    expect(await page.locator("#summary thead th").allInnerTexts()).toEqual(["Strategy", "Final value", "Total return",
      "Ann. return", "Ann. volatility", "Sharpe", "Max drawdown", "Sortino", "Calmar", "VaR 95%", "CVaR 95%"]);
    // ewp really is the same at every frequency in the report.
    const ewp = report.filter((r) => r.PATH.endsWith("ewp")).map((r) => r.final_value);
    expect(new Set(ewp).size).toBe(1);
    await page.screenshot({ path: join(OUT, "web-paths.png"), fullPage: true });
  });

  it("hides a frequency, a strategy and one curve from the legend in every panel, and shows them again", async () => {
    const shownCount = () => page.evaluate(() =>
      (window as unknown as Win).folio.state.charts.map((c) => c.series.slice(1).filter((s) => s.show).length));
    await page.locator('#legend-body .lg-freq[data-freq="w"]').click();
    expect(await shownCount()).toEqual([13, 13, 13]);
    expect(await page.locator('#legend-body .lg-item[aria-pressed="false"]').count()).toBe(6);
    await page.locator('#legend-body .lg-freq[data-freq="w"]').click();
    expect(await shownCount()).toEqual([19, 19, 19]);
    await page.locator('#legend-body .lg-name[data-strategy="hrp"]').click();
    expect(await shownCount()).toEqual([16, 16, 16]);
    await page.locator('#legend-body .lg-name[data-strategy="hrp"]').click();
    await page.locator('#legend-body .lg-item[data-id="l1r.l2m.l3rpp"]').click();
    expect(await shownCount()).toEqual([18, 18, 18]);
    await page.locator('#legend-body .lg-item[data-id="l1r.l2m.l3rpp"]').click();
    expect(await shownCount()).toEqual([19, 19, 19]);
  });

  it("switches the main chart to a log scale and the lower panel to rolling returns", async () => {
    await page.check("#log-scale");
    await expect.poll(() => page.locator("#chart").getAttribute("data-scale")).toBe("log");
    expect(await page.evaluate(() => (window as unknown as Win).folio.state.charts[0].scales.y.distr)).toBe(3);
    await page.selectOption("#rolling-metric", "ret252");
    await expect.poll(() => page.locator("#rolling-title").innerText()).toMatch(/Rolling 1-year return/);
    await page.uncheck("#log-scale");
    await expect.poll(() => page.locator("#chart").getAttribute("data-scale")).toBe("linear");
  });

  it("sorts the summary by a column with the mouse and the keyboard, and restores the original order", async () => {
    const sharpe = page.locator("#summary thead th").nth(5);
    await sharpe.locator("button").click();
    expect(await sharpe.getAttribute("aria-sort")).toBe("descending");
    const values = async () => (await page.locator("#summary tbody tr").evaluateAll((rows) =>
      rows.map((r) => r.querySelectorAll("td")[5].textContent ?? ""))).map(Number);
    const desc = await values();
    expect(desc).toEqual([...desc].sort((a, b) => b - a));
    await sharpe.locator("button").focus();
    await page.keyboard.press("Enter");
    expect(await sharpe.getAttribute("aria-sort")).toBe("ascending");
    const asc = await values();
    expect(asc).toEqual([...asc].sort((a, b) => a - b));
    await page.keyboard.press("Space");
    expect(await sharpe.getAttribute("aria-sort")).toBeNull();
    expect(await rowIds()).toEqual(DISPLAY_IDS);
  });

  it("downloads the summary table and the values as CSV and the charts as PNG", async () => {
    const save = async (button: string) => {
      const [dl] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
      const path = join(OUT, dl.suggestedFilename());
      await dl.saveAs(path);
      return { name: dl.suggestedFilename(), body: readFileSync(path) };
    };
    const summary = await save("#summary-download");
    expect(summary.name).toMatch(/^folio-paths-.*-summary\.csv$/);
    const lines = summary.body.toString("utf8").trim().split("\n");
    expect(lines[0]).toBe("strategy,final_value,total_return,annualised_return,annualised_volatility,sharpe,max_drawdown,sortino,calmar,var_95,cvar_95");
    // equal weight's one row is exported once per real series id (issue 21: "l1r.l2*.l3ewp" is not an id)
    expect(lines).toHaveLength(22);
    expect(lines.slice(1, 4).map((l) => l.split(",")[0])).toEqual(["l1r.l2d.l3ewp", "l1r.l2w.l3ewp", "l1r.l2m.l3ewp"]);
    expect(lines[1]).toMatch(/^l1r\.l2d\.l3ewp,\d+(\.\d+)?,/);
    expect(lines[2].split(",").slice(1)).toEqual(lines[1].split(",").slice(1));
    const values = await save("#values-download");
    const vl = values.body.toString("utf8").trim().split("\n");
    expect(vl[0]).toBe(`date,${STRATEGY_IDS.join(",")}`);
    expect(vl[1]).toMatch(/^\d{4}-\d{2}-\d{2},100000\.00,/);
    const png = await save("#png-download");
    expect(png.name).toMatch(/-chart\.png$/);
    expect(png.body.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect(png.body.length).toBeGreaterThan(10_000);
  });

  it("puts the request in the URL, and a shared URL restores the form and re-runs it", async () => {
    const url = new URL(page.url());
    expect(url.searchParams.get("tickers")).toBe(tickers.join(","));
    expect(url.searchParams.get("mode")).toBeNull();
    const shared = `${server.url}/?tickers=${tickers.map((t) => t.toLowerCase()).join(",")}&covariance=shrink&hrp=direct`;
    const other = await context.newPage();
    try {
      await other.goto(shared);
      await other.locator("#chart[data-series-count]").waitFor();
      expect(await other.locator("#chart").getAttribute("data-series-count")).toBe("19");
      expect(await other.locator("#selected .chip").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.ticker))).toEqual(tickers);
      expect(await other.locator("#covariance").inputValue()).toBe("shrink");
      expect(await other.locator("#hrp").inputValue()).toBe("direct");
      expect(new URL(other.url()).searchParams.get("covariance")).toBe("shrink");
      // A sims URL: mode, runs and seed come back and the seed is used.
      await other.goto(`${server.url}/?tickers=${tickers.join(",")}&mode=sims&runs=3&seed=7&model=correlated`);
      await expect.poll(() => other.locator("#sims-seed").innerText(), { timeout: 30_000 }).toBe("seed 7 · correlated");
      expect(await other.locator("#run-count").inputValue()).toBe("3");
      expect(await other.locator('input[name="mode"][value="sims"]').isChecked()).toBe(true);
    } finally {
      await other.close();
    }
  });

  it("runs sims: a 5-95/25-75 percentile fan, an overlay, box plots of final values, and a summary over runs", async () => {
    await page.check('input[name="mode"][value="sims"]');
    await page.fill("#run-count", "8");
    await page.fill("#seed", "42");
    await page.click("#run");
    await expect.poll(() => page.locator("#chart").getAttribute("data-mode"), { timeout: 30_000 }).toBe("sims");
    await expect.poll(() => page.locator("#sims-seed").innerText(), { timeout: 30_000 }).toContain("seed 42");
    expect(await page.locator("#chart").getAttribute("data-view")).toBe("fan");
    expect(await page.locator("#chart").getAttribute("data-series-count")).toBe("5"); // 5, 25, 50, 75, 95
    expect(await page.locator("#legend-body").innerText()).toMatch(/25–75 %[\s\S]*5–95 %[\s\S]*median/);
    expect(await page.locator("#dist-chart").getAttribute("data-rows")).toBe("19");
    expect(await page.locator("#panels").isHidden()).toBe(true);
    // The overlay fetches every run (/sims) on demand: the fan came from the server's summary.
    await page.selectOption("#sims-view", "overlay");
    await expect.poll(() => page.locator("#chart").getAttribute("data-series-count"), { timeout: 30_000 }).toBe("8"); // one per run
    expect(await page.locator("#summary tbody tr").count()).toBe(19);
    expect(await page.locator("#summary thead th").allInnerTexts()).toContain("P(loss)");
    expect((await page.locator("#summary thead th").allInnerTexts()).filter((h) => h.startsWith("Final ")))
      .toEqual(["Final 5%", "Final 25%", "Final median", "Final 75%", "Final mean", "Final 95%"]);
    expect(new URL(page.url()).searchParams.get("seed")).toBe("42");
    await page.selectOption("#sims-view", "fan");
    await page.screenshot({ path: join(OUT, "web-sims.png"), fullPage: true });
  });

  it("marks the previous results stale when a run fails, and clears the mark when the next one succeeds", async () => {
    await page.fill("#run-count", "1000000");
    await page.click("#run");
    await page.locator("#error").waitFor({ state: "visible" });
    await expect.poll(() => page.locator("#error").innerText(), { timeout: 30_000 }).toMatch(/Invalid request \(400 INVALID_REQUEST\)[\s\S]*\/run_count/);
    expect(await page.locator("#results").getAttribute("data-stale")).toBe("failed");
    expect(await page.locator("#stale-note").innerText()).toMatch(/The last run failed .*results below are from the previous request: sims · /);
    await page.screenshot({ path: join(OUT, "web-stale.png"), fullPage: true });
    await page.fill("#run-count", "8");
    await page.click("#run");
    await expect.poll(() => page.locator("#results").getAttribute("data-stale"), { timeout: 30_000 }).toBeNull();
    expect(await page.locator("#stale-note").isHidden()).toBe(true);
    expect(await page.locator("#error").isHidden()).toBe(true);
    await page.check('input[name="mode"][value="paths"]');
  });

  it("shows the API's explanation when the date range is too short, over stale results", async () => {
    // 60 calendar days before the end of the data: far fewer than 253 common trading days.
    const start = new Date(Date.parse(`${last}T00:00:00Z`) - 60 * 86_400_000).toISOString().slice(0, 10);
    await page.fill("#start", start);
    await page.click("#run");
    const error = page.locator("#error");
    await error.waitFor({ state: "visible" });
    const text = await error.innerText();
    expect(text).toMatch(/Insufficient history \(422 INSUFFICIENT_HISTORY\)/);
    expect(text).toMatch(/\d+ common trading days .*at least 253 are needed/);
    expect(await page.locator("#results").getAttribute("data-stale")).toBe("failed");
    await page.screenshot({ path: join(OUT, "web-error.png"), fullPage: true });
    await page.fill("#start", "");
  });

  it("fits a 390 px screen in paths mode: no sideways scrolling, legend smaller than the chart", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click("#run");
    await expect.poll(() => page.locator("#results").getAttribute("data-stale"), { timeout: 30_000 }).toBeNull();
    await expect.poll(() => page.locator("#chart").getAttribute("data-series-count")).toBe("19");
    await expect.poll(noSideScroll).toBeLessThanOrEqual(390);
    const chartWidth = await page.locator("#chart .uplot").evaluate((e) => (e as HTMLElement).getBoundingClientRect().width);
    expect(chartWidth).toBeLessThanOrEqual(390);
    // The legend starts collapsed on a phone after a reload; opened, it is still smaller than the chart.
    await page.evaluate(() => {
      (document.getElementById("legend") as HTMLDetailsElement).open = true;
    });
    const h = await heights();
    expect(h.legend).toBeLessThan(h.chart);
    expect(await noSideScroll()).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(OUT, "web-phone-paths.png"), fullPage: true });
    await page.locator("#chart-card").screenshot({ path: join(OUT, "web-phone-paths-chart.png") });
  });

  it("fits a 390 px screen in sims mode with 100 runs: the form, the legend and the box plots stay inside", async () => {
    await page.check('input[name="mode"][value="sims"]');
    // The sims form alone (the Seed input used to reach 425 px).
    const right = await page.locator("#seed").evaluate((e) => e.getBoundingClientRect().right);
    expect(right).toBeLessThanOrEqual(390);
    expect(await noSideScroll()).toBeLessThanOrEqual(390);
    await page.fill("#run-count", "100");
    await page.fill("#seed", "3");
    await page.click("#run");
    await expect.poll(() => page.locator("#sims-seed").innerText(), { timeout: 60_000 }).toContain("seed 3");
    const timing = await page.evaluate(() => (window as unknown as { folio: { state: { timing: { responseMs: number; renderMs: number } } } }).folio.state.timing);
    console.log(`[measure] sims 100 runs x ${tickers.length} tickers at 390 px: response ${timing.responseMs.toFixed(0)} ms, drawing ${timing.renderMs.toFixed(0)} ms`);
    expect(timing.renderMs).toBeGreaterThan(0);
    await page.selectOption("#sims-view", "overlay");
    await expect.poll(() => page.locator("#chart").getAttribute("data-series-count"), { timeout: 60_000 }).toBe("100");
    await page.evaluate(() => {
      (document.getElementById("legend") as HTMLDetailsElement).open = true;
    });
    const h = await heights();
    expect(h.legend).toBeLessThan(h.chart);
    await page.waitForTimeout(200);
    expect(await noSideScroll(), (await sticking()).join("; ")).toBeLessThanOrEqual(390);
    const dist = await page.locator("#dist-chart").evaluate((e) => e.getBoundingClientRect().right);
    expect(dist).toBeLessThanOrEqual(390);
    await page.selectOption("#sims-view", "fan");
    await page.screenshot({ path: join(OUT, "web-phone-sims.png"), fullPage: true });
    await page.locator("#chart-card").screenshot({ path: join(OUT, "web-phone-sims-chart.png") });
  });

  it("draws 100 runs x 20 tickers of sims from the server's summary: under 2 MB transferred, no run downloaded", async () => {
    const many = (await openStore()).list().slice(0, 20).map((t) => t.ticker);
    expect(many).toHaveLength(20);
    const other = await context.newPage();
    try {
      await other.setViewportSize({ width: 1280, height: 900 });
      await other.goto(`${server.url}/?tickers=${many.join(",")}&mode=sims&runs=100&seed=11`);
      await expect.poll(() => other.locator("#sims-seed").innerText(), { timeout: 120_000 }).toContain("seed 11");
      await expect.poll(() => other.locator("#chart").getAttribute("data-view")).toBe("fan");
      const m = await other.evaluate(() => {
        const api = (performance.getEntriesByType("resource") as PerformanceResourceTiming[])
          .filter((e) => new URL(e.name).pathname.startsWith("/v1/optimiser/"));
        const timing = (window as unknown as { folio: { state: { timing: { responseMs: number; renderMs: number } } } }).folio.state.timing;
        return {
          timing,
          requests: api.map((e) => ({ path: new URL(e.name).pathname, transfer: e.transferSize, body: e.encodedBodySize })),
        };
      });
      const summary = m.requests.find((r) => r.path === "/v1/optimiser/sims/summary");
      expect(summary, JSON.stringify(m.requests)).toBeDefined();
      expect(m.requests.map((r) => r.path)).not.toContain("/v1/optimiser/sims");
      const transferred = m.requests.reduce((a, r) => a + r.transfer, 0);
      console.log(`[measure] sims 100 runs x 20 tickers (desktop): response ${m.timing.responseMs.toFixed(0)} ms, ` +
        `drawing ${m.timing.renderMs.toFixed(0)} ms after the response, transferred ${transferred} bytes ` +
        `(${m.requests.map((r) => `${r.path} ${r.transfer} B, body ${r.body} B`).join("; ")})`);
      expect(summary!.body).toBeGreaterThan(0);
      expect(transferred).toBeGreaterThan(summary!.body);
      expect(transferred).toBeLessThan(2 * 1024 * 1024);
      expect(m.timing.renderMs).toBeGreaterThan(0);
      expect(await other.locator("#dist-chart").getAttribute("data-rows")).toBe("19");
      expect(await other.locator("#summary tbody tr").count()).toBe(19);
    } finally {
      await other.close();
    }
  });

  it("shows the desktop paths view for the README picture", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.url}/?tickers=${tickers.join(",")}`);
    await page.locator("#chart[data-series-count]").waitFor();
    await expect.poll(noSideScroll).toBeLessThanOrEqual(1280);
    const h = await heights();
    expect(h.legend).toBeLessThan(h.chart);
    await page.locator("#chart-card").screenshot({ path: join(OUT, "web-desktop-chart.png") });
    await page.screenshot({ path: join(OUT, "web-desktop-paths.png"), fullPage: false });
  });
});
