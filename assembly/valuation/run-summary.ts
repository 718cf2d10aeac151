import { fdlibmLog, fdlibmLog2, fdlibmLog2Finish, fdlibmLog2Reduce, LOG2_CONSTANTS } from "../stats/fdlibm-log";

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
 *     logarithm of `Math.log`, stats/fdlibm-log.ts; alpha in excess of the daily risk-free log rate `rf`,
 *     docs/method.md §7.6), NaN for null or without a benchmark (bi < 0); rec[15] V_0;
 *   - `band` (P values): V on the band rows.
 * Layout: `B` S×n; `iSpec` [E, P, Wn, rows(E), bandRows(P), withdrawalRows(Wn)]; `fSpec` [amount(E), rate(E),
 *   wf(Wn)]; `rec` S×RUN_FIELDS, `band` S×P, `paid` S×max(E, 1). Scratch `Vf` 4n, `lr` 4n, `lb` 2n f64.
 * Method: the benchmark's log-returns and sums once per run (they are the same for every series), then the series
 *   four at a time in two f64x2 (`groupFigures`: the log-returns by `logLane`, the drawdown per epoch of the running
 *   peak and both passes' sums, each lane in the scalar code's order and operations, so the same bits as one series
 *   at a time).
 * Complexity: O(S·n) with S·(n − 1) logarithms when bi ≥ 0 (two per f64x2 division); no allocation.
 */
export function summarizeRun(B: usize, S: i32, n: i32, bi: i32, iSpec: usize, fSpec: usize, rec: usize,
                             band: usize, paid: usize, Vf: usize, lr: usize, lb: usize, rf: f64): void {
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
  const nBytes = <usize>n << 3;
  // The benchmark's part of `relativeFromLogReturns`, the same for every series: its log-returns (lb), their sums
  // (pass 1) and, centred on their mean, yc (pass 2's y) and Σ y².
  const yc = lb + nBytes;
  if (relative) {
    const benchGone = E > 0 ? withFlows(B + (<usize>(bi * n) << 3), n, E, rows, amount, rate, Vf) : -1;
    depletedLogLane(E > 0 ? Vf : B + (<usize>(bi * n) << 3), m, lb, 3, benchGone);
    benchmarkSums(lb, m, yc);
    benchRf = rf;
  }
  // Series in groups of four (two f64x2, lanes s0 … s0 + 3; past S the last series again, computed and not kept):
  // per lane every sum runs over t in the scalar code's order, so every figure keeps its bits.
  for (let s0: i32 = 0; s0 < S; s0 += 4) {
    for (let l: i32 = 0; l < 4; l++) {
      const s = min(s0 + l, S - 1);
      const b = B + (<usize>(s * n) << 3);
      const gone = E > 0 ? withFlows(b, n, E, rows, amount, rate, Vf + <usize>l * nBytes) : -1;
      const V = E > 0 ? Vf + <usize>l * nBytes : b;
      store<usize>(LANES_V + (<usize>l << 2), V);
      store<i32>(LANES_GONE + (<usize>l << 2), gone);
      if (s0 + l >= S) continue;
      const r = rec + (<usize>(s * RUN_FIELDS) << 3);
      store<f64>(r, load<f64>(V + (<usize>H << 3)));
      store<f64>(r, load<f64>(b + (<usize>H << 3)), 8);
      store<f64>(r, load<f64>(b), 16);
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
      store<f64>(r, load<f64>(V), 120);
    }
    groupFigures(load<usize>(LANES_V), load<usize>(LANES_V, 4), load<usize>(LANES_V, 8), load<usize>(LANES_V, 12),
      n, relative, lb, yc, lr, rec + (<usize>(s0 * RUN_FIELDS) << 3), S - s0, bi >= s0 && bi < s0 + 4 ? bi - s0 : -1);
  }
}

/** The four series pointers of a group and their depletion rows (static scratch, no allocation per run). */
const LANES_V = memory.data(32, 16);
const LANES_GONE = memory.data(16, 16);

/**
 * `logLane` of a series depleted at row `gone` (−1: never): V is 0 from that row on, so ln(V_t/V_{t−1}) is NaN
 * (0/0) after it — written as NaN without its logarithm — and row `gone` itself is the one division and logarithm
 * (−∞ unless V_{gone−1} is 0 too); the rows before it by `logLane`. The same values as `logLane` of the whole series
 * (a NaN's payload aside, which no figure keeps: every NaN is reported as null).
 */
function depletedLogLane(v: usize, m: i32, out: usize, shift: i32, gone: i32): void {
  if (gone < 1 || gone > m) {
    logLane(v, m, out, shift);
    return;
  }
  logLane(v, gone - 1, out, shift);
  const x = load<f64>(v + (<usize>gone << 3)) / load<f64>(v + (<usize>(gone - 1) << 3));
  store<f64>(out + (<usize>(gone - 1) << shift), fdlibmLog(x));
  for (let t: i32 = gone + 1; t <= m; t++) store<f64>(out + (<usize>(t - 1) << shift), NaN);
}

/**
 * ln(v[t]/v[t − 1]) at byte (t − 1)·2^shift of `out`, t = 1 … m (`logReturns`; shift 5: every fourth f64, a
 * group's lane; shift 3: contiguous). Rows t and t + 1 in one f64x2 (two overlapping loads, one division), in blocks
 * of LOG_PAIRS: `fdlibmLog2Reduce` for the block, then `fdlibmLog2Finish`, and `fdlibmLog2` for a pair with a lane
 * outside the fast case; an odd last row by `fdlibmLog`. Each value is `logReturns`' division and logarithm, so the
 * same bits.
 */
function logLane(v: usize, m: i32, out: usize, shift: i32 = 5): void {
  const C = LOG2_CONSTANTS;
  const T = LOG_BLOCK;
  let t: i32 = 1;
  while (t < m) {
    // a block of up to LOG_PAIRS pairs: the reductions into T, then the values
    const pairs = min(LOG_PAIRS, (m - t + 1) >> 1);
    for (let j: i32 = 0; j < pairs; j++) {
      const o = <usize>(t + 2 * j) << 3;
      fdlibmLog2Reduce(f64x2.div(v128.load(v + o), v128.load(v + o - 8)), C, T + (<usize>j << 6));
    }
    for (let j: i32 = 0; j < pairs; j++) {
      let l = fdlibmLog2Finish(T + (<usize>j << 6), C);
      const u = t + 2 * j;
      if (v128.any_true(f64x2.ne(l, l))) {
        const o = <usize>u << 3;
        l = fdlibmLog2(f64x2.div(v128.load(v + o), v128.load(v + o - 8)));
      }
      const p = out + (<usize>(u - 1) << shift);
      v128.store64_lane(p, l, 0);
      v128.store64_lane(p + (<usize>1 << shift), l, 1);
    }
    t += 2 * pairs;
    if (pairs == 0) break;
  }
  if (t == m) {
    const x = load<f64>(v + (<usize>t << 3)) / load<f64>(v + (<usize>(t - 1) << 3));
    store<f64>(out + (<usize>(t - 1) << shift), fdlibmLog(x));
  }
}

/** `logLane`'s pairs per block and its block (4 f64x2 per pair: 16 KiB, in L1 between the two loops). */
const LOG_PAIRS: i32 = 256;
const LOG_BLOCK = memory.data(256 * 64, 16);

// The benchmark's sums of `relativeFromLogReturns`' two passes (the same for every series of a run), set by
// `benchmarkSums` once per run.
let benchMb: f64 = 0.0;
let benchUpB: f64 = 0.0;
let benchDownB: f64 = 0.0;
let benchNUp: i32 = 0;
let benchNDown: i32 = 0;
let benchSbb: f64 = 0.0;
/** The daily risk-free log rate alpha is taken in excess of (`summarizeRun`'s rf; 0 without one). */
let benchRf: f64 = 0.0;

/** Pass 1 and 2 of the benchmark's log-returns q (m): the sums in the scalar code's order; yc[t] = q[t] − mb. */
function benchmarkSums(q: usize, m: i32, yc: usize): void {
  let mb: f64 = 0.0;
  let upB: f64 = 0.0;
  let nUp: i32 = 0;
  let downB: f64 = 0.0;
  let nDown: i32 = 0;
  for (let t: i32 = 0; t < m; t++) {
    const y = load<f64>(q + (<usize>t << 3));
    mb += y;
    if (y > 0.0) { upB += y; nUp++; }
    if (y < 0.0) { downB += y; nDown++; }
  }
  mb /= <f64>m;
  let sbb: f64 = 0.0;
  for (let t: i32 = 0; t < m; t++) {
    const y = load<f64>(q + (<usize>t << 3)) - mb;
    store<f64>(yc + (<usize>t << 3), y);
    sbb += y * y;
  }
  benchMb = mb;
  benchUpB = upB;
  benchDownB = downB;
  benchNUp = nUp;
  benchNDown = nDown;
  benchSbb = sbb;
}

/**
 * The drawdown (rec[3]) and, when `relative`, the seven relative figures (rec[8 … 14]) of the group's series, lanes
 * (V0, V1) and (V2, V3), `keep` of them kept (records at rec, RUN_FIELDS apart): the log-returns ln(V_t/V_{t−1})
 * of the four series by `logLane` into `lr` (lane l of row t − 1 at lr[4(t − 1) + l]); one pass over t for the
 * running peak's drawdown and pass 1's sums; then pass 2 over `lr`. Each lane is `runFigures`' and
 * `relativeFromLogReturns`' operation for operation: `if (y > 0) upR += x` is a select of upR + x on y > 0; the
 * drawdown's maximum is taken per epoch of the peak (one division per new peak).
 */
function groupFigures(V0: usize, V1: usize, V2: usize, V3: usize, n: i32, relative: bool, q: usize, yc: usize,
                      lr: usize, rec: usize, keep: i32, benchLane: i32): void {
  const one = f64x2.splat(1.0);
  const zero = f64x2.splat(0.0);
  let x0 = f64x2.replace_lane(f64x2.splat(load<f64>(V0)), 1, load<f64>(V1));
  let x1 = f64x2.replace_lane(f64x2.splat(load<f64>(V2)), 1, load<f64>(V3));
  // The drawdown by epochs of the running peak: while the peak p stays, max_t (1 − x_t/p) = 1 − (min_t x_t)/p, since
  // x ↦ fl(x/p) (p > 0) and q ↦ fl(1 − q) are monotone and NaN takes part in neither (no comparison is true for it),
  // so one division per epoch (at each new peak and at the end) gives the scalar code's maximum, bit for bit.
  let peak0 = x0;
  let peak1 = x1;
  let low0 = x0;
  let low1 = x1;
  let mdd0 = zero;
  let mdd1 = zero;
  if (!relative) {
    for (let t: i32 = 1; t < n; t++) {
      const o = <usize>t << 3;
      x0 = f64x2.replace_lane(f64x2.splat(load<f64>(V0 + o)), 1, load<f64>(V1 + o));
      x1 = f64x2.replace_lane(f64x2.splat(load<f64>(V2 + o)), 1, load<f64>(V3 + o));
      const new0 = f64x2.gt(x0, peak0);
      const new1 = f64x2.gt(x1, peak1);
      if (v128.any_true(v128.or(new0, new1))) {
        const dd0 = f64x2.sub(one, f64x2.div(low0, peak0));
        const dd1 = f64x2.sub(one, f64x2.div(low1, peak1));
        mdd0 = v128.bitselect(dd0, mdd0, v128.and(new0, f64x2.gt(dd0, mdd0)));
        mdd1 = v128.bitselect(dd1, mdd1, v128.and(new1, f64x2.gt(dd1, mdd1)));
        peak0 = v128.bitselect(x0, peak0, new0);
        peak1 = v128.bitselect(x1, peak1, new1);
        low0 = v128.bitselect(x0, low0, new0);
        low1 = v128.bitselect(x1, low1, new1);
      }
      low0 = v128.bitselect(x0, low0, f64x2.lt(x0, low0));
      low1 = v128.bitselect(x1, low1, f64x2.lt(x1, low1));
    }
    {
      const dd0 = f64x2.sub(one, f64x2.div(low0, peak0));
      const dd1 = f64x2.sub(one, f64x2.div(low1, peak1));
      mdd0 = v128.bitselect(dd0, mdd0, f64x2.gt(dd0, mdd0));
      mdd1 = v128.bitselect(dd1, mdd1, f64x2.gt(dd1, mdd1));
    }
    for (let l: i32 = 0; l < min(keep, 4); l++) {
      const r = rec + (<usize>(l * RUN_FIELDS) << 3);
      const mdd = l < 2 ? mdd0 : mdd1;
      store<f64>(r, (l & 1) == 0 ? f64x2.extract_lane(mdd, 0) : f64x2.extract_lane(mdd, 1), 24);
      for (let k: i32 = 8; k < 15; k++) store<f64>(r + (<usize>k << 3), NaN);
    }
    return;
  }
  const m = n - 1;
  // the log-returns of the four series, lane l of row t − 1 at lr[4(t − 1) + l]: the benchmark's are q's (the same
  // division and logarithm of the same values), and a lane past `keep` is not kept, so its returns are not computed
  // (its sums run over whatever the lane holds, lanes are independent)
  returnsLane(V0, 0, m, lr, q, keep, benchLane, load<i32>(LANES_GONE));
  returnsLane(V1, 1, m, lr, q, keep, benchLane, load<i32>(LANES_GONE, 4));
  returnsLane(V2, 2, m, lr, q, keep, benchLane, load<i32>(LANES_GONE, 8));
  returnsLane(V3, 3, m, lr, q, keep, benchLane, load<i32>(LANES_GONE, 12));
  let mr0 = zero, mr1 = zero, up0 = zero, up1 = zero, dn0 = zero, dn1 = zero;
  for (let t: i32 = 1; t < n; t++) {
    const o = <usize>t << 3;
    x0 = f64x2.replace_lane(f64x2.splat(load<f64>(V0 + o)), 1, load<f64>(V1 + o));
    x1 = f64x2.replace_lane(f64x2.splat(load<f64>(V2 + o)), 1, load<f64>(V3 + o));
    const new0 = f64x2.gt(x0, peak0);
    const new1 = f64x2.gt(x1, peak1);
    if (v128.any_true(v128.or(new0, new1))) {
      const dd0 = f64x2.sub(one, f64x2.div(low0, peak0));
      const dd1 = f64x2.sub(one, f64x2.div(low1, peak1));
      mdd0 = v128.bitselect(dd0, mdd0, v128.and(new0, f64x2.gt(dd0, mdd0)));
      mdd1 = v128.bitselect(dd1, mdd1, v128.and(new1, f64x2.gt(dd1, mdd1)));
      peak0 = v128.bitselect(x0, peak0, new0);
      peak1 = v128.bitselect(x1, peak1, new1);
      low0 = v128.bitselect(x0, low0, new0);
      low1 = v128.bitselect(x1, low1, new1);
    }
    low0 = v128.bitselect(x0, low0, f64x2.lt(x0, low0));
    low1 = v128.bitselect(x1, low1, f64x2.lt(x1, low1));
    const p = lr + (<usize>(t - 1) << 5);
    const l0 = v128.load(p);
    const l1 = v128.load(p, 16);
    const y = f64x2.splat(load<f64>(q + (<usize>(t - 1) << 3)));
    const isUp = f64x2.gt(y, zero);
    const isDown = f64x2.lt(y, zero);
    mr0 = f64x2.add(mr0, l0);
    mr1 = f64x2.add(mr1, l1);
    up0 = v128.bitselect(f64x2.add(up0, l0), up0, isUp);
    up1 = v128.bitselect(f64x2.add(up1, l1), up1, isUp);
    dn0 = v128.bitselect(f64x2.add(dn0, l0), dn0, isDown);
    dn1 = v128.bitselect(f64x2.add(dn1, l1), dn1, isDown);
  }
  {
    const dd0 = f64x2.sub(one, f64x2.div(low0, peak0));
    const dd1 = f64x2.sub(one, f64x2.div(low1, peak1));
    mdd0 = v128.bitselect(dd0, mdd0, f64x2.gt(dd0, mdd0));
    mdd1 = v128.bitselect(dd1, mdd1, f64x2.gt(dd1, mdd1));
  }
  const fm = f64x2.splat(<f64>m);
  mr0 = f64x2.div(mr0, fm);
  mr1 = f64x2.div(mr1, fm);
  let srr0 = zero, srr1 = zero, srb0 = zero, srb1 = zero, sdd0 = zero, sdd1 = zero;
  for (let t: i32 = 0; t < m; t++) {
    const p = lr + (<usize>t << 5);
    const a0 = f64x2.sub(v128.load(p), mr0);
    const a1 = f64x2.sub(v128.load(p, 16), mr1);
    const y = f64x2.splat(load<f64>(yc + (<usize>t << 3)));
    const d0 = f64x2.sub(a0, y);
    const d1 = f64x2.sub(a1, y);
    srr0 = f64x2.add(srr0, f64x2.mul(a0, a0));
    srr1 = f64x2.add(srr1, f64x2.mul(a1, a1));
    srb0 = f64x2.add(srb0, f64x2.mul(a0, y));
    srb1 = f64x2.add(srb1, f64x2.mul(a1, y));
    sdd0 = f64x2.add(sdd0, f64x2.mul(d0, d0));
    sdd1 = f64x2.add(sdd1, f64x2.mul(d1, d1));
  }
  for (let l: i32 = 0; l < min(keep, 4); l++) {
    const r = rec + (<usize>(l * RUN_FIELDS) << 3);
    const h = l < 2;
    const lane = l & 1;
    const mdd = h ? mdd0 : mdd1;
    const mr = h ? mr0 : mr1;
    const up = h ? up0 : up1;
    const dn = h ? dn0 : dn1;
    const srr = h ? srr0 : srr1;
    const srb = h ? srb0 : srb1;
    const sdd = h ? sdd0 : sdd1;
    if (lane == 0) {
      store<f64>(r, f64x2.extract_lane(mdd, 0), 24);
      relativeFinish(f64x2.extract_lane(mr, 0), f64x2.extract_lane(up, 0), f64x2.extract_lane(dn, 0),
        f64x2.extract_lane(srr, 0), f64x2.extract_lane(srb, 0), f64x2.extract_lane(sdd, 0), m, r + 64);
    } else {
      store<f64>(r, f64x2.extract_lane(mdd, 1), 24);
      relativeFinish(f64x2.extract_lane(mr, 1), f64x2.extract_lane(up, 1), f64x2.extract_lane(dn, 1),
        f64x2.extract_lane(srr, 1), f64x2.extract_lane(srb, 1), f64x2.extract_lane(sdd, 1), m, r + 64);
    }
  }
}

/**
 * Lane l of a group's log-returns (`groupFigures`): `depletedLogLane` of V (depleted at row `gone`, or −1), or the
 * benchmark's q (m contiguous) copied when l is its lane, or nothing for a lane past `keep`.
 */
function returnsLane(V: usize, l: i32, m: i32, lr: usize, q: usize, keep: i32, benchLane: i32, gone: i32): void {
  if (l >= keep) return;
  const out = lr + (<usize>l << 3);
  if (l != benchLane) {
    depletedLogLane(V, m, out, 5, gone);
    return;
  }
  for (let t: i32 = 0; t < m; t++) store<f64>(out + (<usize>t << 5), load<f64>(q + (<usize>t << 3)));
}

/**
 * `applyFlows` (src/report/plan.ts) of one series into `out`; the depletion row or −1. Between events the units U
 * stay, so V_t = U·B_t over the segment, two rows per f64x2 (1·B_t is B_t bit for bit, so `applyFlows`' `U === 1 ?
 * B_t : U·B_t` is one multiplication).
 */
function withFlows(b: usize, n: i32, E: i32, rows: usize, amount: usize, rate: usize, out: usize): i32 {
  let U: f64 = 1.0;
  let t: i32 = 0;
  for (let e: i32 = 0; e <= E; e++) {
    // rows t … end − 1 at the units so far, then the event at row `end` (none past the last)
    const end = e < E ? min(load<i32>(rows + (<usize>e << 2)), n) : n;
    scaleRows(b, U, t, end, out);
    if (end >= n) return -1;
    const bt = load<f64>(b + (<usize>end << 3));
    const v = U * bt;
    const F = load<f64>(amount + (<usize>e << 3)) + load<f64>(rate + (<usize>e << 3)) * v;
    if (v + F < 0.0) {
      memory.fill(out + (<usize>end << 3), 0, <usize>(n - end) << 3);
      return end;
    }
    U = (v + F) / bt;
    t = end;
  }
  return -1;
}

/** out[t] = U·b[t] for t in [from, to) (two rows per f64x2). */
function scaleRows(b: usize, U: f64, from: i32, to: i32, out: usize): void {
  const u = f64x2.splat(U);
  let t = from;
  for (; t + 1 < to; t += 2) {
    const o = <usize>t << 3;
    v128.store(out + o, f64x2.mul(u, v128.load(b + o)));
  }
  if (t < to) store<f64>(out + (<usize>t << 3), U * load<f64>(b + (<usize>t << 3)));
}

/**
 * `logReturnsOf`: out[t − 1] = ln(v[t]/v[t − 1]), t = 1 … m (fdlibm's logarithm, as `Math.log`): the definition
 * `logLane` computes (kept as its reference; not called).
 */
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

/**
 * The end of `relativeFromLogReturns` (src/report/summary.ts), m ≥ 2, from a series' sums (mr already divided by
 * m) and the benchmark's: the seven figures at out[0 … 6], NaN for null.
 */
function relativeFinish(mr: f64, upR: f64, downR: f64, srr: f64, srb: f64, sdd: f64, m: i32,
                        out: usize): void {
  const mb = benchMb;
  const upB = benchUpB;
  const downB = benchDownB;
  const nUp = benchNUp;
  const nDown = benchNDown;
  const sbb = benchSbb;
  const md = mr - mb;
  const m1 = <f64>(m - 1);
  const varB = sbb / m1;
  const cov = srb / m1;
  const beta = varB > 0.0 ? finite(cov / varB) : NaN;
  const te = finite(Math.sqrt(sdd / m1) * Math.sqrt(252.0));
  store<f64>(out, beta);
  // Jensen's alpha on excess returns, `relativeFromLogReturns`' 252·((mr − rf) − β·(mb − rf)): with rf = 0,
  // mr − 0 and mb − 0 are mr and mb exactly, the bits without a rate
  const rf = benchRf;
  store<f64>(out, isNaN(beta) ? NaN : finite(252.0 * ((mr - rf) - beta * (mb - rf))), 8);
  store<f64>(out, te, 16);
  store<f64>(out, !isNaN(te) && te > 0.0 ? finite((252.0 * md) / te) : NaN, 24);
  store<f64>(out, varB > 0.0 && srr > 0.0 ? finite(srb / Math.sqrt(srr * sbb)) : NaN, 32);
  const fUp = <f64>nUp;
  const fDown = <f64>nDown;
  store<f64>(out, nUp > 0 ? finite(upR / fUp / (upB / fUp)) : NaN, 40);
  store<f64>(out, nDown > 0 ? finite(downR / fDown / (downB / fDown)) : NaN, 48);
}
