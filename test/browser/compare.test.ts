/**
 * "My portfolio vs the benchmark only" and the capture basis on the page (issue 30 item 7): the strategy picker's
 * "none" choice sends `strategies: []` (enabled only with a portfolio or a benchmark), the capture basis select comes
 * from /v1/info `options.capture_basis` and goes to /report as `capture_basis`, and the capture columns say their
 * basis — in real headless Chromium against the real server, at 1366 and 390 px. Screenshots go to test-output/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CAPTURE_BASES } from "../../src/report/summary.js";
import type { RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { describeWithChromium, launchChromium, openWithKey, pickTickers, startPageServer } from "../helpers/browser.js";

const KEY = "browser-test-key-compare-0123456789abcdef";
const OUT = join(PROJECT_ROOT, "test-output");

type Body = Record<string, unknown>;

describeWithChromium("the page's \"none\" strategy choice and capture basis at 1366 and 390 px", () => {
  let server: RunningServer;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let all: string[];
  /** The JSON bodies the page posted, by path, since the last `sent.clear()`. */
  const sent = new Map<string, Body[]>();

  const runAndWait = async () => {
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 90_000 }).toMatch(/^(Done|Failed|Cancelled)/);
  };
  const rowIds = () => page.locator("#summary tbody tr").evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.strategy));
  const headers = () => page.locator("#summary thead th").allInnerTexts();
  /** The summary cell of row `id` under the header starting with `label`. */
  const cellOf = (id: string, label: string) => page.evaluate(([id, label]) => {
    const ths = [...document.querySelectorAll("#summary thead th")];
    const k = ths.findIndex((th) => th.textContent!.startsWith(label));
    const tr = document.querySelector(`#summary tbody tr[data-strategy="${id}"]`);
    return k < 0 || !tr ? null : (tr.children[k] as HTMLElement).innerText;
  }, [id, label] as const);
  const post = async (path: string, body: Body) => {
    const res = await fetch(server.url + path, {
      method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify(body),
    });
    expect(res.status, path).toBe(200);
    return res.json() as Promise<Body[]>;
  };

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    all = (await openStore()).list().map((t) => t.ticker);
    server = await startPageServer(KEY);
    browser = await launchChromium();
    ({ page } = browser);
    page.on("request", (req) => {
      const path = new URL(req.url()).pathname;
      if (req.method() !== "POST" || !path.startsWith("/v1/")) return;
      sent.set(path, [...(sent.get(path) ?? []), req.postDataJSON() as Body]);
    });
    await openWithKey(page, server.url, KEY);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("offers \"none\" and the capture basis only with a benchmark (or a portfolio), the bases from /v1/info", async () => {
    await pickTickers(page, all.slice(0, 3));
    expect(await page.locator("#strategy-none").isDisabled()).toBe(true);
    expect(await page.locator("#capture-basis").isDisabled()).toBe(true);
    expect(await page.locator("#capture-basis option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)))
      .toEqual([...CAPTURE_BASES]);
    await page.fill("#benchmark", all[all.length - 1]);
    expect(await page.locator("#strategy-none").isEnabled()).toBe(true);
    expect(await page.locator("#capture-basis").isEnabled()).toBe(true);
    await page.check("#strategy-none");
    expect(await page.locator("#strategy-picker input:checked").count()).toBe(1);
    // picking a strategy again clears "none"; "none" again clears the strategies
    await page.locator("#strategy-picker input[value=gmvp]").check();
    expect(await page.locator("#strategy-none").isChecked()).toBe(false);
    await page.check("#strategy-none");
    expect(await page.locator("#strategy-picker input[value=gmvp]").isChecked()).toBe(false);
    // the benchmark alone: one row, no /weights asked (it has nothing to weigh and refuses a benchmark)
    sent.clear();
    await runAndWait();
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    expect(await rowIds()).toEqual([`benchmark.${all[all.length - 1]}`]);
    expect(sent.get("/v1/optimiser/paths")?.[0]).toMatchObject({ strategies: [], benchmark: all[all.length - 1] });
    expect(sent.has("/v1/optimiser/weights")).toBe(false);
    expect(new URL(page.url()).searchParams.get("strategies")).toBe("none");
    // without the benchmark, "none" is cleared and disabled and PathLit's seven come back
    await page.fill("#benchmark", "");
    expect(await page.locator("#strategy-none").isDisabled()).toBe(true);
    expect(await page.locator("#strategy-none").isChecked()).toBe(false);
    expect(await page.locator("#strategy-picker input:checked").count()).toBe(7);
    expect(await page.locator("#capture-basis").isDisabled()).toBe(true);
  });

  it("compares my portfolio with the benchmark only, on the monthly capture basis sent to /report (a shared URL)", async () => {
    const [a, b, c] = all.slice(0, 3);
    const bench = all[all.length - 1];
    const q = new URLSearchParams({ tickers: `${a},${b},${c}`, benchmark: bench, strategies: "none", capture_basis: "monthly",
      rebalance: "monthly", portfolio: `mine=${a}:0.6,${b}:0.4` });
    sent.clear();
    await page.goto(`${server.url}/?${q}`);
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 90_000 }).toMatch(/^(Done|Failed)/);
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    expect(await page.locator("#strategy-none").isChecked()).toBe(true);
    expect(await page.locator("#capture-basis").inputValue()).toBe("monthly");
    expect(await rowIds()).toEqual(["portfolio.mine", `benchmark.${bench}`]);
    const paths = sent.get("/v1/optimiser/paths")![0];
    expect(paths).toMatchObject({ strategies: [], benchmark: bench, rebalance: "monthly" });
    expect(paths).not.toHaveProperty("capture_basis");
    expect(sent.get("/v1/optimiser/weights")![0]).toMatchObject({ strategies: [], portfolios: { mine: { [a]: 0.6, [b]: 0.4 } } });
    const reportBody = sent.get("/v1/optimiser/report")![0];
    expect(reportBody).toMatchObject({ strategies: [], capture_basis: "monthly" });
    // the headers say the basis; the page's figures are the server's /report ones on that basis
    const h = await headers();
    expect(h).toContain("Up capture\nmonthly");
    expect(h).toContain("Down capture\nmonthly");
    const wrap = await page.evaluate(() => { const w = document.querySelector("#summary")!.closest(".table-wrap")!; return [w.scrollWidth, w.clientWidth]; });
    expect(wrap[0], "the default columns fit 1366 px").toBeLessThanOrEqual(wrap[1]);
    const report = await post("/v1/optimiser/report", reportBody);
    const daily = await post("/v1/optimiser/report", { ...reportBody, capture_basis: undefined });
    const mine = report.find((r) => r.PATH === "portfolio.mine")!;
    expect(mine.capture_basis).toBe("monthly");
    expect(mine.up_capture).not.toBe(daily.find((r) => r.PATH === "portfolio.mine")!.up_capture);
    expect(await cellOf("portfolio.mine", "Up capture")).toBe((mine.up_capture as number).toFixed(2));
    expect(await cellOf("portfolio.mine", "Down capture")).toBe((mine.down_capture as number).toFixed(2));
    expect(await page.locator("#summary-note").innerText()).toMatch(/up and down capture on calendar months/);
    await page.locator("#summary").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUT, "compare-1366.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(OUT, "compare-390.png"), fullPage: true });
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  it("labels the daily basis when chosen, and on simulations (daily only: the select is disabled there)", async () => {
    await page.selectOption("#capture-basis", "daily");
    sent.clear();
    await runAndWait();
    expect(await headers()).toContain("Up capture\ndaily");
    expect(sent.get("/v1/optimiser/report")![0]).not.toHaveProperty("capture_basis");
    expect(new URL(page.url()).searchParams.get("capture_basis")).toBeNull();
    await page.check('input[name="mode"][value="sims"]');
    expect(await page.locator("#capture-basis").isDisabled()).toBe(true);
    await page.fill("#run-count", "5");
    sent.clear();
    await runAndWait();
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    expect(sent.get("/v1/optimiser/sims/summary")![0]).toMatchObject({ strategies: [] });
    expect(sent.get("/v1/optimiser/sims/summary")![0]).not.toHaveProperty("capture_basis");
    expect(await rowIds()).toEqual(["portfolio.mine", `benchmark.${all[all.length - 1]}`]);
    expect(await headers()).toContain("Up capture\ndaily");
    expect(await page.locator("#summary-note").innerText()).toMatch(/capture ratios on daily log-returns/);
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(OUT, "compare-sims-390.png"), fullPage: true });
    await page.setViewportSize({ width: 1366, height: 900 });
  });
});
