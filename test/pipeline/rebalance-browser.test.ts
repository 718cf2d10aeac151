/**
 * The web page's rebalancing controls in headless Chromium against the real server: a linked request with a rule and
 * costs fills the controls, /paths gets the rebalancing members and /weights does not (it refuses them).
 * Without /usr/bin/chromium this suite skips with a printed reason; in CI it fails instead (as test/browser/ does).
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { describeWithChromium, launchChromium } from "../helpers/browser.js";

const KEY = "rebalance-browser-key-0123456789ab";

describeWithChromium("the page's rebalancing controls", () => {
  let server: RunningServer;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let page: Page;
  let tickers: string[];

  beforeAll(async () => {
    tickers = (await openStore()).list().slice(0, 2).map((t) => t.ticker);
    server = await startServer({
      env: { API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "1" }, logger: false, print: () => {},
    });
    browser = await launchChromium();
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("runs a linked monthly request with costs: the paths body carries them, the weights body does not", async () => {
    const bodies: Record<string, Record<string, unknown>> = {};
    page.on("request", (r) => {
      const m = /\/v1\/optimiser\/(paths|weights)$/.exec(r.url());
      if (m && r.method() === "POST") bodies[m[1]] = JSON.parse(r.postData() ?? "{}") as Record<string, unknown>;
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    await page.evaluate((key) => localStorage.setItem("folio.apiKey", key), KEY);
    await page.goto(`${server.url}/?tickers=${tickers.join(",")}&rebalance=monthly&costs=10`);
    await page.locator(".ticker-option").first().waitFor();
    expect(await page.locator("#rebalance").inputValue()).toBe("monthly");
    expect(await page.locator("#costs").inputValue()).toBe("10");
    await page.click("#run");
    await page.locator("#chart[data-series-count]").waitFor();
    expect(await page.locator("#error").isHidden()).toBe(true);
    expect(bodies.paths).toMatchObject({ tickers, rebalance: "monthly", window: "rolling", costs_bps: 10 });
    expect(bodies.weights.tickers).toEqual(tickers);
    for (const k of ["rebalance", "window", "costs_bps"]) expect(bodies.weights).not.toHaveProperty(k);
    expect(page.url()).toContain("rebalance=monthly");
    // the summary table gains the trades of each series, as /report gives them
    const headers = await page.locator("#summary thead th").allTextContents();
    for (const h of ["Rebalances", "Turnover", "Costs paid"]) expect(headers.map((x) => x.trim())).toContain(h);
    const report = (await (await fetch(`${server.url}/v1/optimiser/report`, {
      method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY },
      body: JSON.stringify(bodies.paths),
    })).json()) as Array<{ PATH: string; rebalances: number }>;
    const ewp = report.find((x) => x.PATH === "l1r.l2d.l3ewp")!;
    expect(ewp.rebalances).toBeGreaterThan(0);
    const cells = await page.locator('#summary tbody tr[data-strategy="l1r.l2d.l3ewp"] td').allTextContents();
    expect(cells.map((x) => x.trim())).toContain(String(ewp.rebalances));
    expect(errors).toEqual([]);
  });
});
