/**
 * The significance section (issue 29 item 1; docs/method.md §7.5) against independent references: Φ and Φ⁻¹ against
 * SciPy; the PSR, DSR, the Ledoit–Wolf HAC Sharpe difference and p-value, Holm's adjustment and the Patton–Politis–
 * White block length against a NumPy/SciPy transcription of the published formulas (the script below, no code
 * shared) on real cvxportfolio paths; Holm by hand; and a seeded coverage study of the bootstrap's 95 % Sharpe
 * intervals on synthetic series of known Sharpe ratio (i.i.d. and AR(1)).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import type { Engine, PriceMatrix } from "../../src/domain/types.js";
import { sharpeDiffBootstrap, stationaryBootstrap } from "../../src/engine/bootstrap.js";
import {
  excessReturns, holm, normalCdf, normalQuantile, optimalBlockLength, significanceOf, dailyRiskFree, type Resampler,
} from "../../src/report/significance.js";
import { percentileOfSorted } from "../../src/report/summary.js";
import { engine as wasmEngine } from "../helpers/kernels.js";
import { rng } from "../helpers/prices.js";
import { describeWithSharedData, sharedDataPath } from "../helpers/shared-data.js";

const wasm = wasmEngine();
const resample: Resampler = (input) => stationaryBootstrap(wasm, input);

let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});

/** python3 with SciPy, or undefined (skips off CI; CI fails: .ci/apt-packages lists python3-scipy). */
function python(): string | undefined {
  const found = ["/usr/bin/python3", "python3"].find((p) => {
    try { execFileSync(p, ["-c", "import scipy.stats, numpy"], { stdio: "ignore" }); return true; } catch { return false; }
  });
  if (found === undefined && process.env.CI === "true") throw new Error("python3 with scipy is missing in CI (.ci/apt-packages lists python3-scipy)");
  if (found === undefined) console.warn("[skip] significance vs SciPy: no python3 with scipy");
  return found;
}

/** The published formulas in NumPy/SciPy, from the values (excess returns computed here again). */
const REFERENCE = String.raw`
import json, sys, math
import numpy as np
from scipy.stats import norm
d = json.load(sys.stdin)
V = [np.array(v, dtype=float) for v in d["values"]]
rf = (1 + d["rf"]) ** (1 / 252) - 1 if d["rf"] != 0 else 0.0
R = [v[1:] / v[:-1] - 1 - rf for v in V]
def mom(x):
    n = len(x); m = x.mean(); c = x - m
    m2 = (c**2).mean(); return n, m, x.std(ddof=1), (c**3).mean() / m2**1.5, (c**4).mean() / m2**2
def psr(sr, srs, n, g3, g4):
    return float(norm.cdf((sr - srs) * math.sqrt(n - 1) / math.sqrt(1 - g3 * sr + (g4 - 1) / 4 * sr**2)))
srs = []
for x in R:
    n, m, s, g3, g4 = mom(x); srs.append(m / s)
srs = np.array(srs); N = len(srs); em = 0.5772156649015329
sr0 = math.sqrt(srs.var(ddof=1)) * ((1 - em) * norm.ppf(1 - 1 / N) + em * norm.ppf(1 - 1 / (N * math.e)))
bench = d["sharpe_benchmark"] / math.sqrt(252)
out = {"psr": [], "dsr": [], "sr0": sr0 * math.sqrt(252), "diff": [], "se": [], "p": [], "bw": [], "block": []}
for x in R:
    n, m, s, g3, g4 = mom(x)
    out["psr"].append(psr(m / s, bench, n, g3, g4)); out["dsr"].append(psr(m / s, sr0, n, g3, g4))
def parzen(x):
    x = abs(x)
    return 1 - 6 * x**2 + 6 * x**3 if x <= 0.5 else (2 * (1 - x)**3 if x <= 1 else 0.0)
def lw(r1, r2):
    T = len(r1); mu1, mu2 = r1.mean(), r2.mean(); g1, g2 = (r1**2).mean(), (r2**2).mean()
    diff = mu1 / r1.std(ddof=1) - mu2 / r2.std(ddof=1)
    grad = np.array([g1 / (g1 - mu1**2)**1.5, -g2 / (g2 - mu2**2)**1.5, -mu1 / (2 * (g1 - mu1**2)**1.5), mu2 / (2 * (g2 - mu2**2)**1.5)])
    Vh = np.column_stack([r1 - mu1, r2 - mu2, r1**2 - g1, r2**2 - g2])
    num = den = 0.0
    for i in range(4):
        y, z = Vh[1:, i], Vh[:-1, i]; rho = (y @ z) / (z @ z); s2 = ((y - rho * z)**2).sum() / (T - 1)
        num += 4 * rho**2 * s2**2 / (1 - rho)**8; den += s2**2 / (1 - rho)**4
    S = 2.6614 * (num / den * T)**0.2
    Psi = Vh.T @ Vh / T
    j = 1
    while j < S:
        G = Vh[j:].T @ Vh[:-j] / T
        Psi += parzen(j / S) * (G + G.T); j += 1
    Psi *= T / (T - 4)
    se = math.sqrt(grad @ Psi @ grad / T)
    return diff, se, 2 * norm.cdf(-abs(diff) / se), S
b = d["base"]
for k, x in enumerate(R):
    if k == b or np.array_equal(x, R[b]): out["diff"].append(None); out["se"].append(None); out["p"].append(None); out["bw"].append(None); continue
    a = lw(x, R[b]); out["diff"].append(a[0] * math.sqrt(252)); out["se"].append(a[1] * math.sqrt(252)); out["p"].append(a[2]); out["bw"].append(a[3])
ps = [(p, k) for k, p in enumerate(out["p"]) if p is not None]; ps.sort()
K = len(ps); h = [None] * len(R); run = 0.0
for j, (p, k) in enumerate(ps):
    run = max(run, min(1.0, (K - j) * p)); h[k] = run
out["holm"] = h
def ppw(x):
    n = len(x); e = x - x.mean(); kn = max(5, math.ceil(math.sqrt(math.log10(n)))); mmax = min(n - 1, math.ceil(math.sqrt(n)) + kn)
    bmax = math.ceil(min(3 * math.sqrt(n), n / 3)); cv = 2 * math.sqrt(math.log10(n) / n)
    acv = np.array([e[k:] @ e[:n - k] / n for k in range(mmax + 1)]); rho = np.abs(acv / acv[0])
    mh = next((k for k in range(0, mmax - kn + 1) if np.all(rho[k + 1:k + kn + 1] < cv)), None)
    M = mmax if mh is None else min(2 * max(mh, 1), mmax)
    lam = lambda t: 1.0 if t <= 0.5 else 2 * (1 - t)
    G = sum(2 * lam(k / M) * k * acv[k] for k in range(1, M + 1)); g0 = acv[0] + sum(2 * lam(k / M) * acv[k] for k in range(1, M + 1))
    return min(bmax, max(1.0, (2 * G**2 / (2 * g0**2))**(1 / 3) * n**(1 / 3)))
out["block"] = [ppw(x) for x in R]
print(json.dumps(out))
`;

const close = (x: number | null, y: number | null, rel: number) => {
  if (y === null) { expect(x).toBeNull(); return; }
  expect(x).not.toBeNull();
  expect(Math.abs(x! - y)).toBeLessThanOrEqual(rel * Math.max(Math.abs(y), 1e-300));
};

describe("the normal distribution", () => {
  it("Φ and Φ⁻¹ agree with SciPy's norm.cdf and norm.ppf (relative 1e-14; Φ below x = −8: 5e-13)", () => {
    const py = python();
    if (py === undefined) return;
    const xs = [-37, -20, -8.5, -6, -3.3, -2, -1.96, -1, -0.3, 0, 1e-8, 0.25, 0.7, 1.5, 2.5, 4, 7, 9];
    const ps = [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.02425, 0.025, 0.1, 0.3, 0.5, 0.6, 0.9, 0.975, 0.999, 1 - 1e-9];
    const ref = JSON.parse(execFileSync(py, ["-c", "import json,sys\nfrom scipy.stats import norm\nd=json.load(sys.stdin)\n" +
      "print(json.dumps([[float(norm.cdf(x)) for x in d[0]],[float(norm.ppf(p)) for p in d[1]]]))"],
    { input: JSON.stringify([xs, ps]) }).toString()) as number[][];
    xs.forEach((x, k) => close(normalCdf(x), ref[0][k], x < -8 ? 5e-13 : 1e-14));
    ps.forEach((p, k) => close(normalQuantile(p), ref[1][k], 1e-14));
  });
});

describe("holm", () => {
  it("multiplies the k-th smallest of K p-values by K − k + 1, keeps them monotone, caps at 1 and skips nulls", () => {
    expect(holm([0.01, null, 0.04, 0.03, 0.5])).toEqual([0.04, null, 0.09, 0.09, 0.5]);
    expect(holm([0.6, 0.7])).toEqual([1, 1]);
  });
});

describeWithSharedData("significance on real paths (cvxportfolio, 30 tickers, 12 series)", () => {
  it("PSR, DSR, the Ledoit–Wolf HAC Sharpe differences, their p-values (Holm too) and the block lengths match NumPy/SciPy", () => {
    const py = python();
    if (py === undefined) return;
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split("\n");
    const rows = lines.slice(1).map((l) => l.split(","));
    const p: PriceMatrix = { tickers: lines[0].split(",").slice(1, 31), dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1, 31).map(Number)) };
    const paths = engine.pathsReport(p, { strategies: ["ewp", "ivp", "gmvp", "hrp"] });
    for (const [rf, srStar] of [[0, 0], [0.02, 0.5]]) {
      const rowsOut = significanceOf(paths.ids, paths.values, { seed: 42n, risk_free: rf, sharpe_benchmark: srStar, bootstrap_runs: 200 }, resample);
      const base = paths.ids.indexOf(rowsOut[0].base);
      expect(rowsOut[0].base).toBe("l1r.l2d.l3ewp");
      const ref = JSON.parse(execFileSync(py, ["-c", REFERENCE], {
        input: JSON.stringify({ values: paths.values.map((v) => Array.from(v)), rf, sharpe_benchmark: srStar, base }),
        maxBuffer: 1 << 26,
      }).toString()) as Record<string, (number | null)[]> & { sr0: number };
      rowsOut.forEach((r, s) => {
        close(r.psr, ref.psr[s], 1e-12);
        close(r.dsr, ref.dsr[s], 1e-12);
        close(r.dsr_sharpe_benchmark, ref.sr0, 1e-12);
        expect(r.dsr_trials).toBe(12);
        // the three ewp series are the same values: a zero difference with p = 1 against the ewp base
        if (s !== base && paths.ids[s].endsWith("l3ewp")) {
          expect(r.sharpe_diff).toBe(0);
          expect(r.p_value).toBe(1);
        } else {
          close(r.sharpe_diff, ref.diff[s], 1e-9);
          close(r.sharpe_diff_se, ref.se[s], 1e-9);
          close(r.p_value, ref.p[s], 1e-9);
          close(r.hac.bandwidth, ref.bw[s], 1e-12);
        }
        close(r.block_length, ref.block[s], 1e-12);
      });
      // Holm over the reference's p-values (its own ewp rows are p ≈ 1 by the formula, here exactly 1)
      const ps = rowsOut.map((r) => r.p_value);
      expect(rowsOut.map((r) => r.p_value_holm)).toEqual(holm(ps));
      expect(rowsOut.filter((r) => r.p_value !== null && r.p_value < 1).length).toBeGreaterThan(5);
    }
  });

  it("sharpe_test \"bootstrap\": Ledoit & Wolf's studentized bootstrap p-values are within 0.05 of the HAC ones on real paths (1,000 resamples: Monte Carlo sd ≤ 0.016)", () => {
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split("\n");
    const rows = lines.slice(1).map((l) => l.split(","));
    const p: PriceMatrix = { tickers: lines[0].split(",").slice(1, 31), dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1, 31).map(Number)) };
    const paths = engine.pathsReport(p, { strategies: ["ewp", "gmvp", "hrp"] });
    const opts = { seed: 3n, bootstrap_runs: 1000 };
    const hac = significanceOf(paths.ids, paths.values, opts, resample);
    const boot = significanceOf(paths.ids, paths.values, { ...opts, sharpe_test: "bootstrap" }, resample, (input) => sharpeDiffBootstrap(wasm, input));
    boot.forEach((r, s) => {
      expect(r.sharpe_diff).toBe(hac[s].sharpe_diff);
      if (r.PATH === r.base) {
        expect(r.p_value).toBeNull();
        expect(r.sharpe_bootstrap).toEqual({ block_length: 0 });
      } else if (r.PATH.endsWith("l3ewp")) {
        expect(r.p_value).toBe(1);
      } else {
        expect(r.sharpe_bootstrap!.block_length).toBeGreaterThanOrEqual(1);
        expect(Math.abs(r.p_value! - hac[s].p_value!)).toBeLessThan(0.05);
        expect(r.p_value!).toBeGreaterThan(1 / 1001);
      }
    });
    expect(boot.map((r) => r.p_value_holm)).toEqual(holm(boot.map((r) => r.p_value)));
    expect(hac[1].sharpe_bootstrap).toBeUndefined();
  });

  it("the intervals hold their point estimate, and the section is reproducible for a seed and changes with it", () => {
    const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").trim().split("\n");
    const rows = lines.slice(1).map((l) => l.split(","));
    const p: PriceMatrix = { tickers: lines[0].split(",").slice(1, 11), dates: rows.map((c) => c[0]), closes: rows.map((c) => c.slice(1, 11).map(Number)) };
    const paths = engine.pathsReport(p, { strategies: ["ewp", "gmvp"] });
    const a = significanceOf(paths.ids, paths.values, { seed: 1n, bootstrap_runs: 500 }, resample);
    const b = significanceOf(paths.ids, paths.values, { seed: 1n, bootstrap_runs: 500 }, resample);
    const c = significanceOf(paths.ids, paths.values, { seed: 2n, bootstrap_runs: 500 }, resample);
    expect(a).toEqual(b);
    expect(a[0].sharpe_ci).not.toEqual(c[0].sharpe_ci);
    for (const r of a) {
      for (const k of ["annualised_return", "annualised_volatility", "sharpe", "max_drawdown"] as const) {
        const ci = r[`${k}_ci`]!;
        expect(ci[0]).toBeLessThan(ci[1]);
        expect(r[k]!).toBeGreaterThan(ci[0]);
        expect(r[k]!).toBeLessThan(ci[1]);
      }
      // zero rate: the annualised return is the value series' own
      const v = paths.values[paths.ids.indexOf(r.PATH)];
      expect(r.annualised_return).toBeCloseTo((v[v.length - 1] / v[0]) ** (252 / (v.length - 1)) - 1, 12);
    }
  });
});

describe("bootstrap coverage (seeded): 95 % Sharpe intervals on synthetic series of known Sharpe ratio", () => {
  /** The share of K series of n returns μ + e_t (e an AR(1) of coefficient φ, marginal sd σ) whose interval holds μ/σ·√252. */
  function coverage(phi: number, seed: number, K = 1000, n = 1000, B = 500): number {
    const u = rng(seed);
    const gauss = () => {
      for (;;) {
        const a = 2 * u() - 1;
        const b = 2 * u() - 1;
        const s = a * a + b * b;
        if (s > 0 && s < 1) return a * Math.sqrt((-2 * Math.log(s)) / s);
      }
    };
    const sigma = 0.01;
    const mu = 0.0005;
    const truth = (mu / sigma) * Math.sqrt(252);
    let hit = 0;
    const chunk = 50;
    for (let k = 0; k < K; k += chunk) {
      const R = new Float64Array(chunk * n);
      const L = new Float64Array(chunk);
      for (let s = 0; s < chunk; s++) {
        let e = gauss() * sigma;
        for (let t = 0; t < n; t++) {
          e = phi * e + sigma * Math.sqrt(1 - phi * phi) * gauss();
          R[s * n + t] = mu + e;
        }
        L[s] = optimalBlockLength(R.subarray(s * n, (s + 1) * n));
      }
      const draws = resample({ returns: R, m: n, S: chunk, blockLengths: L, seed: BigInt(seed * 1000 + k), resamples: B });
      for (let s = 0; s < chunk; s++) {
        const xs = Array.from({ length: B }, (_, b) => draws[(s * B + b) * 4 + 2]).sort((x, y) => x - y);
        if (percentileOfSorted(xs, 2.5) <= truth && truth <= percentileOfSorted(xs, 97.5)) hit++;
      }
    }
    return hit / K;
  }

  it("i.i.d. normal returns: coverage within 93–97 % (1,000 series of 1,000 days, 500 resamples)", () => {
    const c = coverage(0, 12345);
    expect(c).toBeGreaterThanOrEqual(0.93);
    expect(c).toBeLessThanOrEqual(0.97);
  }, 60_000);

  it("AR(1) returns (φ = 0.05): coverage within 93–97 %", () => {
    const c = coverage(0.05, 12345);
    expect(c).toBeGreaterThanOrEqual(0.93);
    expect(c).toBeLessThanOrEqual(0.97);
  }, 60_000);
});

describe("excess returns", () => {
  it("subtract (1 + r)^(1/252) − 1 from each day's simple return, and nothing for a zero rate", () => {
    const v = [100, 101, 99.5, 102];
    expect(Array.from(excessReturns(v))).toEqual([101 / 100 - 1, 99.5 / 101 - 1, 102 / 99.5 - 1]);
    const d = dailyRiskFree(0.05);
    expect((1 + d) ** 252).toBeCloseTo(1.05, 12);
    expect(Array.from(excessReturns(v, d))).toEqual([101 / 100 - 1 - d, 99.5 / 101 - 1 - d, 102 / 99.5 - 1 - d]);
  });
});
