import { fdlibmLog } from "../stats/fdlibm-log";

/** f64 fields per run and series of `summarizeRun`'s record (src/engine/sims.ts reads them by these offsets). */
export const RUN_FIELDS: i32 = 16;

/**
 * The figures a sims summary keeps of one run (docs/method.md §8.10, §8.13; src/report/sims-summary.ts and
 * src/report/plan.ts, whose arithmetic this is, operation for operation, so the summary's bits do not change):
 * per series s of the run's S×n values B (series-major, without flows; B[s][0] = the initial value),
 *   - the values with the flows V (unit accounting, `applyFlows`): units U = 1; at event e (row rows[e]):
 *     v = U·B_t, F = amount[e] + rate[e]·v; v + F < 0 depletes (V = 0 from t on); else U = (v + F)/B_t; V_t = B_t
 *     while U = 1, else U·B_t;
 *   - rec[0] V_H, rec[1] B_H, rec[2] B_0, rec[3] the maximum drawdown of V (running peak, 1 − V_t/peak), rec[4] the
 *     depletion row or −1, rec[5] the safe withdrawal rate's critical rate 1/Σ_j (wf_j·B_0)/B_{w_j} (NaN without
 *     anniversaries), rec[6] 1 when V_H < V_0, rec[7] K, the flows paid (the money-weighted return's cash flows,
 *     written to `paid`: the scheduled flow, or at a depletion −(what was left)), rec[8 … 14] the figures relative
 *     to the benchmark series `bi` (beta, alpha, tracking error, information ratio, correlation, up and down
 *     capture; `relativeFromLogReturns`' two passes over the daily log-returns ln(V_t/V_{t−1}) of both, with the
 *     logarithm of `Math.log`, stats/fdlibm-log.ts), NaN for null or without a benchmark (bi < 0); rec[15] V_0;
 *   - `band` (P values): V on the band rows.
 * Layout: `B` S×n; `iSpec` [E, P, Wn, rows(E), bandRows(P), withdrawalRows(Wn)]; `fSpec` [amount(E), rate(E),
 *   wf(Wn)]; `rec` S×RUN_FIELDS, `band` S×P, `paid` S×max(E, 1). Scratch `Vf`, `lr`, `lb`: n f64 each.
 * Complexity: O(S·n) with S·(n − 1) logarithms when bi ≥ 0; no allocation.
 */
export function summarizeRun(B: usize, S: i32, n: i32, bi: i32, iSpec: usize, fSpec: usize, rec: usize,
                             band: usize, paid: usize, Vf: usize, lr: usize, lb: usize): void {
  const E = load<i32>(iSpec);
  const P = load<i32>(iSpec, 4);
  const Wn = load<i32>(iSpec, 8);
  const rows = iSpec + 12;
  const bandRows = rows + (<usize>E << 2);
  const wRows = bandRows + (<usize>P << 2);
  const amount = fSpec;
  const rate = fSpec + (<usize>E << 3);
  const wf = rate + (<usize>E << 3);
  const H = n - 1;
  const m = n - 1;
  const Ecols = max(E, 1);
  const relative = bi >= 0 && m >= 2;
  if (relative) {
    if (E > 0) withFlows(B + (<usize>(bi * n) << 3), n, E, rows, amount, rate, Vf);
    logReturns(E > 0 ? Vf : B + (<usize>(bi * n) << 3), m, lb);
  }
  for (let s: i32 = 0; s < S; s++) {
    const b = B + (<usize>(s * n) << 3);
    const r = rec + (<usize>(s * RUN_FIELDS) << 3);
    const gone = E > 0 ? withFlows(b, n, E, rows, amount, rate, Vf) : -1;
    const V = E > 0 ? Vf : b;
    store<f64>(r, load<f64>(V + (<usize>H << 3)));
    store<f64>(r, load<f64>(b + (<usize>H << 3)), 8);
    store<f64>(r, load<f64>(b), 16);
    // runFigures: the running peak's drawdown
    let peak = load<f64>(V);
    let mdd: f64 = 0.0;
    for (let t: i32 = 0; t < n; t++) {
      const x = load<f64>(V + (<usize>t << 3));
      if (x > peak) peak = x;
      const dd = 1.0 - x / peak;
      if (dd > mdd) mdd = dd;
    }
    store<f64>(r, mdd, 24);
    store<f64>(r, <f64>gone, 32);
    // the critical rate of the safe withdrawal rate
    const b0 = load<f64>(b);
    let pv: f64 = 0.0;
    for (let j: i32 = 0; j < Wn; j++) {
      const t = load<i32>(wRows + (<usize>j << 2));
      pv += (load<f64>(wf + (<usize>j << 3)) * b0) / load<f64>(b + (<usize>t << 3));
    }
    store<f64>(r, Wn > 0 ? 1.0 / pv : NaN, 40);
    store<f64>(r, n > 0 && load<f64>(V + (<usize>H << 3)) < load<f64>(V) ? 1.0 : 0.0, 48);
    // the flows paid (PlanAccumulator.runIrr)
    let K: i32 = 0;
    if (E > 0) {
      const pd = paid + (<usize>(s * Ecols) << 3);
      let U: f64 = 1.0;
      for (let e: i32 = 0; e < E; e++) {
        const t = load<i32>(rows + (<usize>e << 2));
        if (gone >= 0 && t > gone) break;
        const bt = load<f64>(b + (<usize>t << 3));
        const before = U * bt;
        store<f64>(pd + (<usize>K << 3), t == gone ? -before
          : load<f64>(amount + (<usize>e << 3)) + load<f64>(rate + (<usize>e << 3)) * before);
        K++;
        if (t == gone) break;
        U = load<f64>(V + (<usize>t << 3)) / bt;
      }
    }
    store<f64>(r, <f64>K, 56);
    // the band rows
    const bd = band + (<usize>(s * P) << 3);
    for (let j: i32 = 0; j < P; j++) {
      store<f64>(bd + (<usize>j << 3), load<f64>(V + (<usize>load<i32>(bandRows + (<usize>j << 2)) << 3)));
    }
    if (relative) {
      logReturns(V, m, lr);
      relativeFigures(lr, lb, m, r + 64);
    } else {
      for (let q: i32 = 8; q < 15; q++) store<f64>(r + (<usize>q << 3), NaN);
    }
    store<f64>(r, load<f64>(V), 120);
  }
}

/** `applyFlows` (src/report/plan.ts) of one series into `out`; the depletion row or −1. */
function withFlows(b: usize, n: i32, E: i32, rows: usize, amount: usize, rate: usize, out: usize): i32 {
  let U: f64 = 1.0;
  let e: i32 = 0;
  for (let t: i32 = 0; t < n; t++) {
    const bt = load<f64>(b + (<usize>t << 3));
    if (e < E && load<i32>(rows + (<usize>e << 2)) == t) {
      const v = U * bt;
      const F = load<f64>(amount + (<usize>e << 3)) + load<f64>(rate + (<usize>e << 3)) * v;
      e++;
      if (v + F < 0.0) {
        for (let u: i32 = t; u < n; u++) store<f64>(out + (<usize>u << 3), 0.0);
        return t;
      }
      U = (v + F) / bt;
    }
    store<f64>(out + (<usize>t << 3), U == 1.0 ? bt : U * bt);
  }
  return -1;
}

/** `logReturnsOf`: out[t − 1] = ln(v[t]/v[t − 1]), t = 1 … m (fdlibm's logarithm, as `Math.log`). */
function logReturns(v: usize, m: i32, out: usize): void {
  let prev = load<f64>(v);
  for (let t: i32 = 1; t <= m; t++) {
    const x = load<f64>(v + (<usize>t << 3));
    store<f64>(out + (<usize>(t - 1) << 3), fdlibmLog(x / prev));
    prev = x;
  }
}

// @ts-ignore: decorator
@inline function finite(x: f64): f64 {
  return isFinite(x) ? x : NaN;
}

/** `relativeFromLogReturns` (src/report/summary.ts), m ≥ 2: the seven figures at out[0 … 6], NaN for null. */
function relativeFigures(r: usize, q: usize, m: i32, out: usize): void {
  let mr: f64 = 0.0;
  let mb: f64 = 0.0;
  let upR: f64 = 0.0;
  let upB: f64 = 0.0;
  let nUp: i32 = 0;
  let downR: f64 = 0.0;
  let downB: f64 = 0.0;
  let nDown: i32 = 0;
  for (let t: i32 = 0; t < m; t++) {
    const x = load<f64>(r + (<usize>t << 3));
    const y = load<f64>(q + (<usize>t << 3));
    mr += x;
    mb += y;
    if (y > 0.0) { upR += x; upB += y; nUp++; }
    if (y < 0.0) { downR += x; downB += y; nDown++; }
  }
  const fm = <f64>m;
  mr /= fm;
  mb /= fm;
  const md = mr - mb;
  let srr: f64 = 0.0;
  let sbb: f64 = 0.0;
  let srb: f64 = 0.0;
  let sdd: f64 = 0.0;
  for (let t: i32 = 0; t < m; t++) {
    const x = load<f64>(r + (<usize>t << 3)) - mr;
    const y = load<f64>(q + (<usize>t << 3)) - mb;
    const d = x - y;
    srr += x * x;
    sbb += y * y;
    srb += x * y;
    sdd += d * d;
  }
  const m1 = <f64>(m - 1);
  const varB = sbb / m1;
  const cov = srb / m1;
  const beta = varB > 0.0 ? finite(cov / varB) : NaN;
  const te = finite(Math.sqrt(sdd / m1) * Math.sqrt(252.0));
  store<f64>(out, beta);
  store<f64>(out, isNaN(beta) ? NaN : finite(252.0 * (mr - beta * mb)), 8);
  store<f64>(out, te, 16);
  store<f64>(out, !isNaN(te) && te > 0.0 ? finite((252.0 * md) / te) : NaN, 24);
  store<f64>(out, varB > 0.0 && srr > 0.0 ? finite(srb / Math.sqrt(srr * sbb)) : NaN, 32);
  const fUp = <f64>nUp;
  const fDown = <f64>nDown;
  store<f64>(out, nUp > 0 ? finite(upR / fUp / (upB / fUp)) : NaN, 40);
  store<f64>(out, nDown > 0 ? finite(downR / fDown / (downB / fDown)) : NaN, 48);
}
