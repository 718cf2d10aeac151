/**
 * Long work on the page as a job (issue 31 item 6; web/js/jobs.js), in real headless Chromium against the real
 * server (jobs in-process, two workers): a 10,000-run simulation runs as a job with its progress (parts done) in the
 * status line and its id in the URL; a reload of that URL resumes the same job (no second submission) and draws its
 * result; Cancel deletes a running job on the server. Screenshot: test-output/jobs-progress.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/http/server.js";
import { openStore } from "../../src/store/index.js";
import { PROJECT_ROOT } from "../helpers/shared-data.js";
import { describeWithChromium, launchChromium, openWithKey, pickTickers } from "../helpers/browser.js";

const KEY = "browser-test-key-jobs-0123456789abcdef";
const OUT = join(PROJECT_ROOT, "test-output");
const JOB_IN_URL = /[?&]job=([0-9a-f-]{36})/;

describeWithChromium("long runs as jobs on the page", () => {
  let server: RunningServer;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let all: string[];
  const submissions: string[] = [];
  const jobOf = async (id: string) => (await fetch(`${server.url}/v1/jobs/${id}`, { headers: { "x-api-key": KEY } })).json() as
    Promise<{ state: string; parts?: { done: number; total: number } }>;
  const jobInUrl = async () => {
    await expect.poll(() => JOB_IN_URL.test(page.url()), { timeout: 60_000 }).toBe(true);
    return JOB_IN_URL.exec(page.url())![1];
  };

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    all = (await openStore()).list().map((t) => t.ticker);
    server = await startServer({
      env: { API_KEYS: KEY, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "2", MAX_RUN_COUNT: "10000", COMPUTE_COST_PER_MINUTE: "1000000000000" },
      logger: false,
      print: () => {},
    });
    browser = await launchChromium();
    ({ page } = browser);
    page.on("request", (r) => {
      if (r.method() === "POST" && r.headers().prefer === "respond-async") submissions.push(r.url());
    });
    await openWithKey(page, server.url, KEY);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the job's parts done and time left, keeps its id in the URL, and resumes it after a reload", async () => {
    await pickTickers(page, all.slice(0, 20));
    await page.check('input[name="mode"][value="sims"]');
    await page.fill("#run-count", "10000");
    await page.fill("#seed", "42");
    await page.click("#run");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 60_000 }).toMatch(/job|Failed/);
    if ((await page.locator("#run-status").innerText()).startsWith("Failed")) throw new Error(await page.locator("#error").innerText());
    const id = await jobInUrl();
    expect(submissions).toHaveLength(1);
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 60_000 }).toMatch(/job (queued|running) · \d+ of \d+ parts done/);
    // once a part is done, the time left the server estimates from the work done (docs/spec.md "Jobs")
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 60_000 })
      .toMatch(/job running · [1-9]\d* of \d+ parts done · about \d+ (s|min) left/);
    await page.screenshot({ path: join(OUT, "jobs-progress.png") });
    // a reload while it runs (or just after): the page restores the request and polls the same job
    await page.reload();
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 300_000 }).toMatch(/^(Done|Failed|Cancelled)/);
    expect(await page.locator("#run-status").innerText(), await page.locator("#error").innerText()).toMatch(/^Done/);
    expect(JOB_IN_URL.exec(page.url())?.[1]).toBe(id);
    expect(submissions, "the reload submitted the job again").toHaveLength(1);
    const job = await jobOf(id);
    expect(job.state).toBe("completed");
    expect(job.parts!.total).toBeGreaterThan(1);
    expect(job.parts!.done).toBe(job.parts!.total);
    expect(await page.locator("#results").isVisible()).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { folio: { state: { last: { runCount: number } } } }).folio.state.last.runCount)).toBe(10000);
  }, 400_000);

  it("cancels the running job on the server with Cancel", async () => {
    await page.fill("#seed", "43");
    await page.click("#run");
    await expect.poll(() => JOB_IN_URL.exec(page.url())?.[1] ?? "", { timeout: 60_000 }).not.toBe("");
    const id = await jobInUrl();
    expect(submissions).toHaveLength(2);
    await page.click("#cancel");
    await expect.poll(() => page.locator("#run-status").innerText(), { timeout: 30_000 }).toMatch(/^Cancelled/);
    expect((await jobOf(id)).state).toBe("cancelled");
    expect(JOB_IN_URL.test(page.url())).toBe(false);
  }, 120_000);
});
