/**
 * Access to the real datasets in ../shared/data (never copied into the project).
 * In CI (CI=true) a missing directory FAILS the tests that need it; on a user's machine they skip with a reason.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = resolve(here, "..", "..");
export const SHARED_DATA = resolve(PROJECT_ROOT, "..", "shared", "data");

export function sharedDataPath(...parts: string[]): string {
  return join(SHARED_DATA, ...parts);
}

export const hasSharedData = existsSync(SHARED_DATA);

/** `describe` that needs ../shared/data: fails in CI when absent, skips elsewhere with a printed reason. */
export function describeWithSharedData(name: string, fn: () => void): void {
  if (hasSharedData) {
    describe(name, fn);
  } else if (process.env.CI) {
    describe(name, () => {
      it("needs ../shared/data, which is missing in CI", () => {
        throw new Error(`../shared/data not found at ${SHARED_DATA}`);
      });
    });
  } else {
    console.warn(`[skip] ${name}: ../shared/data not found at ${SHARED_DATA}`);
    describe.skip(name, fn);
  }
}
