/**
 * The web page in real headless Chromium (Debian's `chromium`, driven by playwright-core), against the real server
 * started in-process on 127.0.0.1 with an ephemeral port and a known key. Screenshots go to test-output/.
 *
 * Without /usr/bin/chromium this suite skips with a printed reason; in CI (CI set) it fails instead
 * (.ci/apt-packages lists chromium, so .ci/run installs it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STRATEGY_IDS } from "../../src/domain/strategies.js";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";

const CHROMIUM = "/usr/bin/chromium";
const KEY = "browser-test-key-0123456789abcdef";
const OUT = join(PROJECT_ROOT, "test-output");

const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];

function describeWithChromium(name: string, fn: () => void): void {
  if (existsSync(CHROMIUM)) describe(name, fn);
  else if (process.env.CI) {
    describe(name, () => {
      it("needs Chromium, which is missing in CI", () => {
        throw new Error(`${CHROMIUM} not found: .ci/apt-packages must list chromium`);
      });
    });
  } else {
    console.warn(`[skip] ${name}: ${CHROMIUM} not found (apt-get install -y chromium)`);
    describe.skip(name, fn);
  }
}

describeWithChromium("the web page in headless Chromium", () => {
  let server: RunningServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let tickers: string[];
  let last: string;

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
    profile = mkdtempSync(join(tmpdir(), "folio-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(30_000);
  });

  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("loads the page, its script and the chart library from this server only", async () => {
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

  it("explains a wrong API key in a readable message", async () => {
    await page.fill("#api-key", "not-the-right-key-at-all");
    await page.click("#key-save");
    const error = page.locator("#error");
    await error.waitFor({ state: "visible" });
    await expect.poll(() => error.innerText()).toMatch(/Invalid API key \(401 INVALID_API_KEY\)[\s\S]*does not match any configured key/);
  });

  it("takes the key once, keeps it in the browser, and lists the tickers", async () => {
    await page.fill("#api-key", KEY);
    await page.click("#key-save");
    await page.locator(".ticker-option").first().waitFor();
    expect(await page.locator("#error").isHidden()).toBe(true);
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

  it("picks tickers by searching, runs paths, and shows 21 curves, the summary and the weights", async () => {
    for (const t of tickers) {
      await page.fill("#ticker-search", t.toLowerCase());
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    expect(await page.locator("#selected .chip").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.ticker))).toEqual(tickers);

    await page.click("#run");
    await page.locator("#chart[data-series-count]").waitFor();
    expect(await page.locator("#chart").getAttribute("data-series-count")).toBe("21");
    expect(await page.locator("#chart canvas").count()).toBeGreaterThan(0);
    expect(await page.locator(".u-legend tr.folio-series").count()).toBe(21);
    expect(await page.locator("#summary tbody tr").evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.strategy)))
      .toEqual([...STRATEGY_IDS]);
    // Every portfolio starts at 100,000: the summary shows dollar final values and percentages.
    const first = await page.locator("#summary tbody tr").first().locator("td").allInnerTexts();
    expect(first[1]).toMatch(/^\$[\d,]+\.\d{2}$/);
    expect(first[6]).toMatch(/^\d+\.\d{2}%$/);
    // The page's summary is the same computation as POST /v1/optimiser/report (one shared module).
    const report = (await page.evaluate(async ([key, body]) => {
      const r = await fetch("/v1/optimiser/report", {
        method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body),
      });
      return r.json();
    }, [KEY, { tickers }] as const)) as { PATH: string; final_value: number; sharpe: number | null; max_drawdown: number }[];
    const shown = await page.locator("#summary tbody tr").evaluateAll((rows) =>
      rows.map((r) => Array.from(r.querySelectorAll("td"), (td) => td.textContent ?? "")));
    expect(report.map((r) => r.PATH)).toEqual([...STRATEGY_IDS]);
    report.forEach((r, i) => {
      expect(Number(shown[i][1].replace(/[$,]/g, ""))).toBeCloseTo(r.final_value, 2);
      expect(shown[i][5]).toBe(r.sharpe === null ? "—" : r.sharpe.toFixed(2));
      expect(shown[i][6]).toBe(`${(r.max_drawdown * 100).toFixed(2)}%`);
    });
    expect(await page.locator("#weights tbody tr").count()).toBe(21);
    expect(await page.locator("#weights thead th").allInnerTexts()).toEqual(["Strategy", ...tickers, "Allocation"]);
    await page.screenshot({ path: join(OUT, "web-paths.png"), fullPage: true });
  });

  it("hides a frequency's 7 curves with its toggle, and one curve with its legend entry, and shows them again", async () => {
    const monthly = page.locator('#freq-toggles input[data-key="m"]');
    await monthly.uncheck();
    expect(await page.locator(".u-legend tr.folio-series.u-off").count()).toBe(7);
    await monthly.check();
    expect(await page.locator(".u-legend tr.folio-series.u-off").count()).toBe(0);
    // One curve on its own: a click on its legend entry.
    await page.locator(".u-legend tr.folio-series").nth(3).locator("th").click();
    expect(await page.locator(".u-legend tr.folio-series.u-off").count()).toBe(1);
    expect(await page.locator(".u-legend tr.folio-series").nth(3).getAttribute("class")).toContain("u-off");
    await page.locator(".u-legend tr.folio-series").nth(3).locator("th").click();
    expect(await page.locator(".u-legend tr.folio-series.u-off").count()).toBe(0);
  });

  it("runs sims and shows the runs as a fan and as an overlay, with a summary over runs", async () => {
    await page.check('input[name="mode"][value="sims"]');
    await page.fill("#run-count", "4");
    await page.fill("#seed", "42");
    await page.click("#run");
    await expect.poll(() => page.locator("#chart").getAttribute("data-mode")).toBe("sims");
    await expect.poll(() => page.locator("#sims-seed").innerText()).toContain("seed 42");
    expect(await page.locator("#chart").getAttribute("data-series-count")).toBe("3"); // min, median, max
    await page.selectOption("#sims-view", "overlay");
    expect(await page.locator("#chart").getAttribute("data-series-count")).toBe("4"); // one per run
    expect(await page.locator("#summary tbody tr").count()).toBe(21);
    expect(await page.locator("#summary thead th").allInnerTexts()).toContain("P(loss)");
    await page.screenshot({ path: join(OUT, "web-sims.png"), fullPage: true });
    // A run count over the server's limit: the schema's message, with its JSON pointer.
    await page.fill("#run-count", "1000000");
    await page.click("#run");
    await page.locator("#error").waitFor({ state: "visible" });
    await expect.poll(() => page.locator("#error").innerText()).toMatch(/Invalid request \(400 INVALID_REQUEST\)[\s\S]*\/run_count/);
    await page.fill("#run-count", "4");
    await page.check('input[name="mode"][value="paths"]');
  });

  it("shows the API's explanation when the date range is too short", async () => {
    // 60 calendar days before the end of the data: far fewer than 253 common trading days.
    const start = new Date(Date.parse(`${last}T00:00:00Z`) - 60 * 86_400_000).toISOString().slice(0, 10);
    await page.fill("#start", start);
    await page.click("#run");
    const error = page.locator("#error");
    await error.waitFor({ state: "visible" });
    const text = await error.innerText();
    expect(text).toMatch(/Insufficient history \(422 INSUFFICIENT_HISTORY\)/);
    expect(text).toMatch(/\d+ common trading days .*at least 253 are needed/);
    await page.screenshot({ path: join(OUT, "web-error.png"), fullPage: true });
    await page.fill("#start", "");
  });

  it("fits a phone-width screen without horizontal scrolling of the page", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click("#run");
    await expect.poll(() => page.locator("#chart").getAttribute("data-series-count")).toBe("21");
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const chartWidth = await page.locator("#chart .uplot").evaluate((e) => (e as HTMLElement).getBoundingClientRect().width);
    expect(chartWidth).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(OUT, "web-phone.png"), fullPage: true });
  });
});
