/**
 * The planning view (issue 28): presets, the plan fields, the probability of success as the headline, the fans of two
 * series overlaid in today's dollars, the log-scale box plot, the planner's table, the warnings and the PNG export —
 * in real headless Chromium against the real server, at 1366 and 390 px. Screenshots go to test-output/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { describeWithChromium, launchChromium, openWithKey } from "../helpers/browser.js";

const KEY = "browser-test-key-plan-0123456789abcdef";
const OUT = join(PROJECT_ROOT, "test-output");

describeWithChromium("the planning view at 1366 and 390 px", () => {
  let server: RunningServer;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let all: string[];

  const runAndWait = async () => {
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 90_000 }).toMatch(/^(Done|Failed|Cancelled)/);
  };
  const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    all = (await openStore()).list().map((t) => t.ticker);
    server = await startServer({
      env: { API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "1", MAX_RUN_COUNT: "500" },
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

  it("plans 30 years with a 4 % withdrawal on the Planning preset: headline, two fans, log box plot, table, PNG", async () => {
    for (const t of all.slice(0, 4)) {
      await page.fill("#ticker-search", t);
      await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
    }
    await page.fill("#benchmark", all[all.length - 1]);
    await page.check('input[name="mode"][value="plan"]');
    expect(await page.locator(".plan-only").isVisible()).toBe(true);
    await page.click("#preset-planning");
    await expect.poll(() => page.locator("#preset-note").innerText(), { timeout: 30_000 }).toMatch(/training days/);
    expect(await page.locator("#model").inputValue()).toBe("bootstrap");
    expect(await page.locator("#drift").inputValue()).toBe("shrunk");
    const training = Number(await page.locator("#plan-training").inputValue());
    expect(training).toBeGreaterThan(252);
    await page.fill("#run-count", "200");
    await page.selectOption("#plan-flow-kind", "withdraw");
    await page.fill("#plan-flow-amount", "4");
    await page.selectOption("#plan-flow-unit", "pct");
    await page.fill("#plan-years", "30");
    await runAndWait();
    expect(await page.locator("#run-status").innerText()).toMatch(/^Done/);
    expect(await page.locator("#plan-card").isVisible()).toBe(true);
    expect(await page.locator("#chart-card").isVisible()).toBe(false);
    // the headline: the probability of success of the picked series, as the summary has it
    const success = await page.locator("#plan-success").innerText();
    expect(success).toMatch(/^\d{1,3} %$/);
    const st = await page.evaluate(() => {
      const s = (window as unknown as { folio: { state: { last: { summary: { strategies: { PATH: string; summary: { success_probability: number } }[] } } } } }).folio.state.last;
      const picked = (document.getElementById("plan-series") as HTMLSelectElement).value;
      return s.summary.strategies.find((x) => x.PATH === picked)!.summary.success_probability;
    });
    expect(success).toBe(`${(st * 100).toFixed(0)} %`);
    // a portfolio-less request: the first series against the benchmark, two fans overlaid
    expect(await page.locator("#plan-compare").inputValue()).toMatch(/^benchmark\./);
    expect(await page.locator("#plan-chart").getAttribute("data-series")).toBe("2");
    expect(await page.locator("#plan-box").getAttribute("data-scale")).toBe("log");
    expect(await page.locator("#plan-table tbody tr").count()).toBeGreaterThan(3);
    expect(await page.locator("#plan-swr").innerText()).toMatch(/%$/);
    await page.screenshot({ path: join(OUT, "plan-1366.png"), fullPage: true });
    const download = page.waitForEvent("download");
    await page.click("#plan-png");
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^folio-plan-\d+-bootstrap-30y\.png$/);
    const title = await page.evaluate(() => (window as unknown as { folio: { state: { planPngTitle: string } } }).folio.state.planPngTitle);
    expect(title).toMatch(/seed \d+ · model bootstrap · horizon 30 years/);
    expect(await pageWidth()).toBeLessThanOrEqual(1366);
  }, 180_000);

  it("warns with the fix when the drift is PathLit's one-year mean, and fits 390 px", async () => {
    await page.click("#preset-pathlit");
    await page.fill("#plan-years", "10");
    await runAndWait();
    const warnings = await page.locator("#plan-warnings").innerText();
    expect(warnings).toMatch(/ignores their correlation|independent/);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.dispatchEvent(new Event("resize")));
    await page.locator("#plan-nominal").check();
    await page.waitForTimeout(300);
    const sticking = await page.evaluate(() => [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap"))
      .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} in ${e.parentElement?.id}.${e.parentElement?.className} ${e.textContent?.slice(0, 30)} ${Math.round(e.getBoundingClientRect().right)}`).slice(0, 6));
    expect(await pageWidth(), JSON.stringify(sticking)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(OUT, "plan-390.png"), fullPage: true });
    await page.locator("#plan-card").screenshot({ path: join(OUT, "plan-390-card.png") });
  }, 120_000);
});
