/**
 * Headless Chromium for the page's tests (Debian's `chromium`, driven by playwright-core): the suite guard and the
 * launch with a throw-away profile. Without /usr/bin/chromium a suite skips with a printed reason; in CI (CI set) it
 * fails instead (.ci/apt-packages lists chromium, so .ci/run installs it).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { describe, it } from "vitest";

export const CHROMIUM = "/usr/bin/chromium";

const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];

export function describeWithChromium(name: string, fn: () => void): void {
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

/** A browser on a fresh profile (desktop viewport, 30 s default timeout); `close()` also removes the profile. */
export async function launchChromium(opts: { acceptDownloads?: boolean } = {}):
  Promise<{ context: BrowserContext; page: Page; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "folio-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 },
    acceptDownloads: opts.acceptDownloads ?? false,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
  return {
    context, page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Open the page at 1366 × 900, save `key` and wait for the ticker list (the steps every page test starts with). */
export async function openWithKey(page: import("playwright-core").Page, url: string, key: string): Promise<void> {
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(url + "/");
  await page.fill("#api-key", key);
  await page.click("#key-save");
  await page.locator(".ticker-option").first().waitFor();
}

/** Pick `tickers` in the ticker picker, one by one. */
export async function pickTickers(page: import("playwright-core").Page, tickers: readonly string[]): Promise<void> {
  for (const t of tickers) {
    await page.fill("#ticker-search", t);
    await page.locator(`.ticker-option[data-ticker="${t}"]`).click();
  }
}

/** The real server on 127.0.0.1 (an ephemeral port, one worker, silent) with the one API key `key` (the page tests'). */
export async function startPageServer(key: string, env: Record<string, string> = {}):
  Promise<import("../../src/http/server.js").RunningServer> {
  const { startServer } = await import("../../src/http/server.js");
  return startServer({
    env: { API_KEYS: key, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", WORKERS: "1", ...env },
    logger: false,
    print: () => {},
  });
}
