/**
 * The analysis sections that need more than the paths' values (issue 29 items 5 and 6): `factors` (the factors'
 * closes aligned with the tickers) and `attribution` (the weights and their windows' covariances). One function for
 * the worker (src/pipeline/respond.ts) and the library (src/pipeline/backtest.ts), so both answer the same bytes.
 */
import type { PriceMatrix } from "../domain/types.js";
import { Problems } from "../domain/problems.js";
import { folioError } from "../errors.js";
import { attributionOf, attributionValues, type Attribution } from "./attribution.js";
import { factorRegressions, type FactorRegression } from "../report/factors.js";
import type { Kernels } from "./kernels.js";
import type { RiskFree } from "../report/risk-free.js";
import { dailyRiskFree } from "../report/significance.js";
import type { Computation, TypedPrices } from "./respond.js";
import type { CheckedOptions } from "./validate.js";

export interface ExtraSections {
  factors?: FactorRegression[];
  attribution?: Attribution[];
}

/**
 * The `factors` and `attribution` members of an analysis of computation `c` (a paths computation on `prices`):
 * `factors` when asked (default: all sections) and the prices carry factors; `attribution` when asked. The
 * attribution's values are bounded by `maxValues` (RESPONSE_TOO_LARGE beyond, before computing).
 */
export function extraSections(kernels: Kernels, prices: TypedPrices, opts: CheckedOptions, c: Computation,
  sections: readonly string[] | undefined, top: number, maxValues = 10_000_000, riskFree?: RiskFree,
  contributionsTop?: number): ExtraSections {
  const asked = (s: string) => sections === undefined || sections.includes(s);
  const out: ExtraSections = {};
  if (asked("factors") && prices.factors !== undefined && prices.factors.length > 0) {
    const T = prices.days.length;
    const from = T - c.dates.length;
    // the factors' closes on the test rows, as the series' values
    const factors = prices.factors.map((f) => ({ ticker: f.ticker, closes: f.closes.subarray(from) }));
    out.factors = factorRegressions(c.ids, c.values!, factors, factorRiskFree(riskFree, c.dates.length - 1));
  }
  if (asked("attribution") && kernels.covarianceOf !== undefined) {
    const values = attributionValues(c, contributionsTop);
    if (values > maxValues) throw folioError("RESPONSE_TOO_LARGE", { values, limit: maxValues }, { values, limit: maxValues });
    out.attribution = attributionOf(kernels, prices, opts, c, top, contributionsTop);
  }
  return out;
}

/**
 * The m daily simple risk-free rates a factor regression subtracts (docs/method.md §7.6, §7.7): a ticker's, or the
 * constant's (1 + r)^(1/252) − 1 on every day; undefined for no rate or 0 (the regressions then as without it).
 */
function factorRiskFree(riskFree: RiskFree | undefined, m: number): ArrayLike<number> | undefined {
  if (riskFree === undefined || riskFree === 0) return undefined;
  if (typeof riskFree === "object") return riskFree.simple;
  return new Float64Array(Math.max(0, m)).fill(dailyRiskFree(riskFree));
}

/**
 * A library caller's factors (`PriceMatrix.factors`) as typed closes, checked: one finite close > 0 per date, and the
 * `factors` option (when given) naming exactly those tickers in that order (case-insensitively), as `benchmark` must
 * name the prices' benchmark.
 */
export function typedFactors(prices: PriceMatrix, factors: readonly string[] | undefined):
  { ticker: string; closes: Float64Array }[] | undefined {
  const given = prices.factors;
  const p = new Problems("prices");
  if (factors !== undefined) {
    const names = (given ?? []).map((f) => f.ticker.toUpperCase());
    if (names.length !== factors.length || factors.some((f, j) => f.toUpperCase() !== names[j])) {
      p.add("/factors", `the prices carry the factors [${names.join(", ")}] but the options name [${factors.join(", ")}]: ` +
        "align them with alignPrices(store, tickers, { factors })");
    }
  }
  p.throwIfAny();
  if (given === undefined || given.length === 0) return undefined;
  const T = prices.dates.length;
  given.forEach((f, j) => {
    if (f.closes.length !== T) p.add(`/factors/${j}/closes`, `has ${f.closes.length} closes but there are ${T} dates`);
    else {
      const bad = f.closes.findIndex((v) => !(Number.isFinite(v) && v > 0));
      if (bad >= 0) p.add(`/factors/${j}/closes/${bad}`, `close of ${f.ticker} on ${prices.dates[bad]} must be a finite number > 0`);
    }
  });
  p.throwIfAny();
  return given.map((f) => ({ ticker: f.ticker, closes: Float64Array.from(f.closes) }));
}
