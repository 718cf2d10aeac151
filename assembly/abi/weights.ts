/**
 * ABI: the weight strategies (issue #2). Pointers are byte offsets into linear memory, matrices are row-major f64,
 * every kernel returns an i32 `Status`; extra detail through `lastBadIndex()`, `lastIterations()`,
 * `lastResidual()` and `lastFailedSeries()`. Inputs are never modified.
 *
 * Covariance kernels (kIvp … kHrpOrder) validate the input contract of MATH.md §3.2 first: every entry finite
 * (`NonFinite`, lastBadIndex = flat index) and Σ_ii > 0 (`ZeroVariance`, lastBadIndex = asset).
 */
import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { scratchF64 } from "../memory";
import { correlation, covariance } from "../stats/covariance";
import { logReturns, bucketSums } from "../stats/returns";
import { shrinkCovariance } from "../stats/shrinkage";
import { checkCovariance, covarianceFactor, arenaMark, arenaRelease } from "../strategies/common";
import { ewp } from "../strategies/ewp";
import { ivp } from "../strategies/ivp";
import { gmvp, gmvpWithFactor } from "../strategies/gmvp";
import { mdcpOnCorrelation, mdcpWithFactor } from "../strategies/mdcp";
import { mdpOnCorrelation, mdpFromMdcp } from "../strategies/mdp";
import { rpp, rppWithMinVariance, varianceRatio } from "../strategies/rpp";
import { hrpWeights, hrpTree } from "../strategies/hrp";

let failedSeries: i32 = -1;

/** The series (0..20, response order l2d.*, l2m.*, l2w.*; strategies alphabetical) that made kWeights21 fail, or -1. */
export function lastFailedSeries(): i32 {
  return failedSeries;
}

/** l3ewp: out[N] = 1/N. */
export function kEwp(N: i32, out: usize): i32 {
  return ewp(N, out);
}

/** l3ivp on the covariance S (N×N): out[N] ∝ 1/√S_ii. */
export function kIvp(S: usize, N: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  return ivp(S, N, out);
}

/** l3gmvp on S (N×N): long-only minimum variance (simplex QP, KKT-certified). */
export function kGmvp(S: usize, N: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  return gmvp(S, N, out);
}

/** l3mdcp: the simplex QP on the correlation matrix derived from S (N×N). */
export function kMdcp(S: usize, N: i32, out: usize): i32 {
  let st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  const C = scratchF64(N * N);
  st = correlation(S, N, C, 0);
  if (st != Status.Ok) return st;
  return mdcpOnCorrelation(C, N, out);
}

/** l3mdp on S (N×N): MDCP solution rescaled by 1/σ. */
export function kMdp(S: usize, N: i32, out: usize): i32 {
  let st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  const C = scratchF64(N * N);
  const sd = scratchF64(N);
  st = correlation(S, N, C, sd);
  if (st != Status.Ok) return st;
  return mdpOnCorrelation(C, sd, N, out);
}

/** l3rpp on S (N×N), no fallback: NotConverged / NotPositiveDefinite / NotCertified when ERC fails. */
export function kRpp(S: usize, N: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  return rpp(S, N, out);
}

/** l3hrp on S (N×N); variant 0 = paper (distance of distances), 1 = direct. */
export function kHrp(S: usize, N: i32, variant: i32, out: usize): i32 {
  let st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  const C = scratchF64(N * N);
  st = correlation(S, N, C, 0);
  if (st != Status.Ok) return st;
  return hrpWeights(S, C, N, variant, out, 0, 0);
}

/** The HRP tree of S: `order` i32[N] (leaf order) and `Z` (N−1)×4 f64 rows [a, b, height, size] (scipy format). */
export function kHrpOrder(S: usize, N: i32, variant: i32, order: usize, Z: usize): i32 {
  let st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  const C = scratchF64(N * N);
  st = correlation(S, N, C, 0);
  if (st != Status.Ok) return st;
  return hrpTree(C, N, variant, order, Z);
}

/** Schäfer–Strimmer target-D shrunk covariance of X (n×N observations) into out (N×N); λ* → lambda (1 f64). */
export function kShrinkCovariance(X: usize, n: i32, N: i32, out: usize, lambda: usize): i32 {
  return shrinkCovariance(X, n, N, out, lambda);
}

/**
 * All 21 weight vectors from the 252 training closes (MATH.md §2, §6).
 *
 * Method: r = kLogReturns(P); for f = d (r as is), m (bucket sums with monthBucket), w (weekBucket), in that
 *   order: Σ_f = sample covariance (covMode 0) or shrunk covariance (covMode 1); zero-variance check
 *   (`ZeroVariance`, lastBadIndex = asset); C_f, σ_f; then ewp, gmvp(Σ), hrp(Σ, C; hrpMode), ivp, mdcp(C),
 *   mdp = mdcp/σ renormalised, rpp(Σ). If rpp fails on the sample covariance it is recomputed on the shrunk
 *   covariance of that frequency and fallback[s] = 1.
 * Layout: P T×N closes; weekBucket, monthBucket i32[T−1] (bucket of each daily return row, non-decreasing,
 *   0..nWeeks−1 / 0..nMonths−1, no empty bucket); out 21×N rows in response order; fallback i32[21].
 * Failure: the first failing status is returned, `lastFailedSeries()` names the series (0..20); a failure of
 *   the frequency itself (covariance, zero variance) names its first series (f·7, the ewp row); a bad price
 *   returns `BadPrice` with lastFailedSeries = −1 and lastBadIndex = t·N + i.
 * Complexity: three covariances (≈ N²(T + n_w + n_m)), three HRP trees (paper ≈ N³ each), six simplex QPs (gmvp, mdcp per frequency; mdp reuses mdcp),
 *   three rpp solves; scratch ≈ 2T·N + 3N² f64 persistent plus the largest single strategy (HRP paper ≈ 3N²):
 *   each step's scratch is released before the next (`arenaMark`/`arenaRelease`).
 * Edge cases: N = 1 → [1] in every row (after the zero-variance check).
 */
export function kWeights21(P: usize, T: i32, N: i32, weekBucket: usize, nWeeks: i32, monthBucket: usize, nMonths: i32,
  covMode: i32, hrpMode: i32, out: usize, fallback: usize): i32 {
  failedSeries = -1;
  if (T < 3 || N < 1 || nWeeks < 2 || nMonths < 2 || nWeeks > T - 1 || nMonths > T - 1 ||
    (covMode != 0 && covMode != 1) || (hrpMode != 0 && hrpMode != 1)) {
    return Status.BadDimensions;
  }
  for (let s: i32 = 0; s < 21; s++) store<i32>(fallback + (<usize>s << 2), 0);
  const n = T - 1;
  const R = scratchF64(n * N);
  let st = logReturns(P, T, N, R);
  if (st != Status.Ok) return st;
  const nb = nWeeks > nMonths ? nWeeks : nMonths;
  const Xb = scratchF64(nb * N);
  const S = scratchF64(N * N);
  const C = scratchF64(N * N);
  const sd = scratchF64(N);
  const Xf = scratchF64(n * N); // low-rank factor of Σ or C when n_f < N (sample covariance only)
  const rowBytes = <usize>N << 3;
  let mark: usize = 0;
  for (let f: i32 = 0; f < 3; f++) {
    const base = f * 7;
    let X = R;
    let nf = n;
    if (f == 1) {
      st = bucketSums(R, n, N, monthBucket, nMonths, Xb);
      X = Xb; nf = nMonths;
    } else if (f == 2) {
      st = bucketSums(R, n, N, weekBucket, nWeeks, Xb);
      X = Xb; nf = nWeeks;
    }
    if (st != Status.Ok) { failedSeries = base; return st; }
    mark = arenaMark();
    st = covMode == 0 ? covariance(X, nf, N, S, 0) : shrinkCovariance(X, nf, N, S, 0);
    arenaRelease(mark);
    if (st != Status.Ok) { failedSeries = base; return st; }
    for (let i: i32 = 0; i < N; i++) {
      if (!(load<f64>(S + (<usize>(i * N + i) << 3)) > 0.0)) {
        setBadIndex(i);
        failedSeries = base;
        return Status.ZeroVariance;
      }
    }
    st = correlation(S, N, C, sd);
    if (st != Status.Ok) { failedSeries = base; return st; }
    const o = out + <usize>base * rowBytes;
    // 0 ewp
    ewp(N, o);
    const useFactor = covMode == 0 && nf < N;
    // 1 gmvp
    if (useFactor) covarianceFactor(X, nf, N, 0, Xf);
    mark = arenaMark(); // each strategy's scratch is released before the next (peak memory ≈ one strategy)
    st = useFactor ? gmvpWithFactor(S, N, o + rowBytes, Xf, nf) : gmvp(S, N, o + rowBytes);
    arenaRelease(mark);
    if (st != Status.Ok) { failedSeries = base + 1; return st; }
    // 2 hrp
    mark = arenaMark();
    st = hrpWeights(S, C, N, hrpMode, o + 2 * rowBytes, 0, 0);
    arenaRelease(mark);
    if (st != Status.Ok) { failedSeries = base + 2; return st; }
    // 3 ivp
    st = ivp(S, N, o + 3 * rowBytes);
    if (st != Status.Ok) { failedSeries = base + 3; return st; }
    // 4 mdcp, 5 mdp (the same QP, rescaled)
    if (useFactor) covarianceFactor(X, nf, N, sd, Xf);
    mark = arenaMark();
    st = useFactor ? mdcpWithFactor(C, N, o + 4 * rowBytes, Xf, nf) : mdcpOnCorrelation(C, N, o + 4 * rowBytes);
    arenaRelease(mark);
    if (st != Status.Ok) { failedSeries = base + 4; return st; }
    mdpFromMdcp(o + 4 * rowBytes, sd, N, o + 5 * rowBytes);
    // 6 rpp, with the shrinkage fallback
    // (the gmvp row gives the ERC existence test for free: min variance ≈ 0 ⇒ no ERC)
    mark = arenaMark();
    st = rppWithMinVariance(S, N, o + 6 * rowBytes, varianceRatio(S, N, o + rowBytes, o + 6 * rowBytes));
    if (st != Status.Ok && covMode == 0) {
      const Ss = scratchF64(N * N);
      st = shrinkCovariance(X, nf, N, Ss, 0);
      if (st == Status.Ok) st = rpp(Ss, N, o + 6 * rowBytes);
      if (st == Status.Ok) store<i32>(fallback + (<usize>(base + 6) << 2), 1);
    }
    arenaRelease(mark);
    if (st != Status.Ok) { failedSeries = base + 6; return st; }
  }
  setBadIndex(-1);
  return Status.Ok;
}
