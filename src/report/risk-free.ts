/**
 * The risk-free rate (issue 29 item 4; docs/method.md §7.6): `risk_free`, a constant annual rate. Absent (or 0),
 * every figure is computed exactly as before, so every existing response keeps its bytes.
 *
 * Pure (no Node APIs): it runs in the browser too.
 */
/** `risk_free` must lie in (−1, 1]: an annual rate above −100 % and at most 100 %. */
export const RISK_FREE_RANGE = { above: -1, max: 1 } as const;

/** Why `risk_free` is refused (path from the options' root), or []: one rule for the library, the schemas, the CLI. */
export function riskFreeProblems(o: { risk_free?: unknown }): { path: string[]; message: string }[] {
  const r = o.risk_free;
  if (r === undefined) return [];
  if (typeof r === "number" && Number.isFinite(r) && r > RISK_FREE_RANGE.above && r <= RISK_FREE_RANGE.max) return [];
  return [{
    path: ["risk_free"],
    message: `must be an annual rate above ${RISK_FREE_RANGE.above} and at most ${RISK_FREE_RANGE.max} (0.04 = 4 % a year; got ${JSON.stringify(r)})`,
  }];
}

export { dailyLogRiskFree } from "./summary.js";
