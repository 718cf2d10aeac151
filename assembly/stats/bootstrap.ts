import { Status } from "../shared/status";
import { RNG_STATE_BYTES, RNG_WORDS_OFFSET } from "../shared/vocabulary";
import { rngSeed, rngJump, rotl } from "../random/xoshiro256";
import { setBadIndex } from "../result";

/** Trading days per year (docs/method.md §6.3). */
const YEAR: f64 = 252.0;

/**
 * Stationary bootstrap of the per-series figures (docs/method.md §7.5): for each of S series of m daily (excess)
 * simple returns, B resamples of m days each, and of each resample the annualised return, the annualised
 * volatility, the annualised Sharpe ratio and the maximum drawdown.
 *
 * Layout: `R` S×m row-major (series s's returns R[s·m + t], t = 0 … m−1, in date order); `L` S mean block lengths
 * (f64, ≥ 1); `out` S×B×4 row-major: out[(s·B + b)·4 + k], k = 0 annualised return, 1 volatility, 2 Sharpe,
 * 3 maximum drawdown. NaN is written where a figure is undefined (zero variance: the Sharpe ratio).
 *
 * **Method** (Politis & Romano 1994): the resample's days j_0 … j_{m−1} are drawn as blocks of geometric length
 * with mean L: day t takes one generator output x; a block starts when t = 0 or lo32(x) < ⌈2³²/L⌉ (probability 1/L
 * to 2⁻³²), at j_t = hi32(x)·m >> 32 (Lemire 2019: while the product's low 32 bits are below 2³² mod m, x is
 * replaced by the next output, so the start is exactly uniform on 0 … m−1); otherwise j_t = j_{t−1} + 1, wrapping
 * to 0 at m (the days are taken circularly). Of the resampled returns x_t = R[j_t]:
 *   W = Π (1 + x_t)            annualised return W^(252/m) − 1,
 *   d_t = x_t − R̄ (R̄ the series' own mean, for a stable variance), mean = R̄ + Σd/m,
 *   var = (Σd² − (Σd)²/m)/(m − 1)   volatility √var·√252, Sharpe mean/√var·√252,
 *   maximum drawdown max_t (1 − W_t / max_{τ≤t} W_τ) with W_{−1} = 1 (the purchase).
 * One output a day and no division keep the loop branch-free but for the drawdown (docs/method.md §7.5: the u64
 * remainder of rngBelow and a second output for the decision doubled its time).
 *
 * **Random numbers** (docs/method.md §7.5, §8.4): the xoshiro256** block is seeded from `seed` by SplitMix64;
 * series g's stream starts one jump after the state the series before it left (g = 0: the seeded state), and its
 * resamples b = 0 … B−1 follow one another in that stream (so resample b does not depend on B, nor series g on the
 * series after it). The step is rngNext's, in locals. Rows first … first + S − 1 of a larger set, given alone with
 * `first` (the split of src/workers/split.ts `runSignificanceSplit`), give the same figures as in the whole set: the
 * series before them are replayed, their outputs drawn (`skipDraws`: m·B Lemire draws each, whatever the data and
 * block lengths) but not used.
 *
 * Preconditions: 2 ≤ m ≤ 2³⁰, S ≥ 1, B ≥ 1, first ≥ 0 (else BadDimensions); every R finite and > −1 and every L finite and ≥ 1
 * (else NonFinite with lastBadIndex the flat index into R, or BadDimensions for L).
 * Complexity: O(S·B·m) time (one generator step and a few flops per resampled day; a division only when the
 * drawdown deepens), O(m) scratch (32 bytes a day: d, d² and 1 + R side by side, one load site per day) beyond
 * the 48-byte generator block. Never modifies its inputs.
 * References: D. N. Politis, J. P. Romano (1994), "The stationary bootstrap", JASA 89(428):1303–1313,
 * doi:10.1080/01621459.1994.10476870; D. Lemire (2019), "Fast random integer generation in an interval", ACM TOMACS
 * 29(1):3, doi:10.1145/3230636.
 */
export function stationaryBootstrap(R: usize, m: i32, S: i32, L: usize, seed: u64, first: i32, B: i32, out: usize): i32 {
  if (m < 2 || S < 1 || B < 1 || first < 0 || m > 0x40000000) return Status.BadDimensions;
  const total = <i64>S * <i64>m;
  for (let k: i64 = 0; k < total; k++) {
    const x = load<f64>(R + (<usize>k << 3));
    if (!isFinite(x) || x <= -1.0) {
      setBadIndex(<i32>k);
      return Status.NonFinite;
    }
  }
  for (let s = 0; s < S; s++) {
    const l = load<f64>(L + (<usize>s << 3));
    if (!isFinite(l) || l < 1.0) return Status.BadDimensions;
  }
  const st = heap.alloc(RNG_STATE_BYTES);
  const day = heap.alloc(<usize>m << 5); // scratch: 4 doubles a day (d, d², 1 + R, unused)
  rngSeed(st, seed);
  for (let g = 0; g < first; g++) {
    if (g > 0) rngJump(st);
    skipDraws(st, <i64>m * <i64>B, m);
  }
  const mU = <u64>m;
  const lim = ((<u64>1 << 32) - mU) % mU; // Lemire's rejection bound: 2³² mod m
  const fm = <f64>m;
  const annual = YEAR / fm;
  const rootYear = Math.sqrt(YEAR);
  for (let s = 0; s < S; s++) {
    if (first + s > 0) rngJump(st);
    // the generator in locals: rngNext's step written out (the same outputs, in order)
    let s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
    let s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
    const row = R + (<usize>s * <usize>m << 3);
    let mean = 0.0;
    for (let t = 0; t < m; t++) mean += load<f64>(row + (<usize>t << 3));
    mean /= fm;
    // per day, side by side: d = R − R̄, d², 1 + R (one cache line holds two days)
    for (let t = 0; t < m; t++) {
      const r = load<f64>(row + (<usize>t << 3));
      const d = r - mean;
      const at = day + (<usize>t << 5);
      store<f64>(at, d);
      store<f64>(at, d * d, 8);
      store<f64>(at, 1.0 + r, 16);
    }
    // a block starts when the low half k of the day's output is below ⌈2³²/L⌉, i.e. k·2⁻³² < 1/L
    const thr = <u64>Math.ceil(4294967296.0 / load<f64>(L + (<usize>s << 3)));
    for (let b = 0; b < B; b++) {
      let j: i32 = 0;
      let sd = 0.0;
      let sd2 = 0.0;
      let w = 1.0;
      let peak = 1.0;
      let floor = 1.0; // peak · (1 − mdd): a value below it deepens the drawdown
      let mdd = 0.0;
      for (let t = 0; t < m; t++) {
        // one output a day: its low 32 bits decide whether a block starts, its high 32 bits draw the start (Lemire)
        let x = rotl(s1 * 5, 7) * 9;
        let sh = s1 << 17;
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= sh; s3 = rotl(s3, 45);
        const starts = t == 0 || (x & 0xFFFFFFFF) < thr;
        let prod = (x >> 32) * mU;
        while ((prod & 0xFFFFFFFF) < lim) { // Lemire's rejection (probability < m/2³²): the next output's high half
          x = rotl(s1 * 5, 7) * 9;
          sh = s1 << 17;
          s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= sh; s3 = rotl(s3, 45);
          prod = (x >> 32) * mU;
        }
        const next = j + 1;
        j = select<i32>(<i32>(prod >> 32), select<i32>(0, next, next == m), starts);
        const at = day + (<usize>j << 5);
        sd += load<f64>(at);
        sd2 += load<f64>(at, 8);
        w *= load<f64>(at, 16);
        if (w > peak) {
          peak = w;
          floor = peak * (1.0 - mdd);
        } else if (w < floor) {
          mdd = 1.0 - w / peak;
          floor = peak * (1.0 - mdd);
        }
      }
      const variance = (sd2 - sd * sd / fm) / (fm - 1.0);
      const vol = Math.sqrt(variance > 0.0 ? variance : 0.0);
      const mu = mean + sd / fm;
      const o = out + ((<usize>s * <usize>B + <usize>b) << 5);
      store<f64>(o, Math.pow(w, annual) - 1.0);
      store<f64>(o, vol * rootYear, 8);
      store<f64>(o, vol > 0.0 ? mu / vol * rootYear : NaN, 16);
      store<f64>(o, mdd, 24);
    }
    store<u64>(st, s0, RNG_WORDS_OFFSET);
    store<u64>(st, s1, RNG_WORDS_OFFSET + 8);
    store<u64>(st, s2, RNG_WORDS_OFFSET + 16);
    store<u64>(st, s3, RNG_WORDS_OFFSET + 24);
  }
  return Status.Ok;
}

/**
 * Ledoit & Wolf's (2008, §3.2) studentized circular block bootstrap p-value of a zero Sharpe-ratio difference, for
 * each of S series against the series `base` (docs/method.md §7.5).
 *
 Only the series s of [from, to) are
 * computed (the split of src/workers/split.ts `runSignificanceSplit`; 0 and S for all).
 *
 * Layout: `R` S×m row-major daily (excess) returns as in `stationaryBootstrap`; `blockLengths` S i32 block lengths b_s
 * (ignored for the base); `dHat` S values |Δ̂_s|/se_s of the data (the HAC statistic, computed by the host; ignored
 * for the base); `out` to − from p-values, out[s − from] series s's (NaN for the base).
 *
 * **Method**: for series s ≠ base, M resamples of l = ⌊m/b⌋ circular blocks of b days, the same days for the series
 * and the base (pairs resampled together). Day block k of a resample takes one generator output x and starts at
 * (hi32(x)·m) >> 32 (Lemire's rejection as in `stationaryBootstrap`, on the next output's high half). With the
 * n = l·b resampled pairs (x_t, y_t): means μ̂*, mean squares γ̂*, Δ* = μ̂*_x/sd*_x − μ̂*_y/sd*_y (sd with ddof 1),
 * the block-bootstrap covariance Ψ* = (1/l)Σ_j ζ_j ζ_jᵀ with ζ_j = (Σ_{t∈j} v_t)/√b, v_t = (x_t − μ̂*_x, y_t − μ̂*_y,
 * x_t² − γ̂*_x, y_t² − γ̂*_y), ∇f* as in the HAC (at the starred moments), se* = √(∇f*ᵀΨ*∇f* / n) and
 * d* = |Δ* − Δ̂|/se*. p = (1 + #{d* ≥ dHat})/(M + 1). Δ̂ is recomputed here from R.
 * Random numbers: series s uses the stream one jump after the state the series before it left (the base's draws none);
 * the series before `from` are replayed (`skipDraws`: M·⌊m/b_s⌋ draws each), so a block gives the whole call's bits.
 * Preconditions: 2 ≤ m ≤ 2³⁰, S ≥ 2, 0 ≤ base < S, 1 ≤ b_s ≤ m, M ≥ 1, 0 ≤ from < to ≤ S (else BadDimensions); R
 * finite (NonFinite).
 * Complexity: O(S·M·m) time, O(m) scratch (4 block sums per block).
 * References: O. Ledoit, M. Wolf (2008), J. Empirical Finance 15(5):850–859, doi:10.1016/j.jempfin.2008.03.002;
 * D. N. Politis, J. P. Romano (1992), "A circular block-resampling procedure for stationary data".
 */
export function sharpeDiffBootstrap(R: usize, m: i32, S: i32, base: i32, blockLengths: usize, seed: u64, M: i32,
  dHat: usize, from: i32, to: i32, out: usize): i32 {
  if (m < 2 || m > 0x40000000 || S < 2 || base < 0 || base >= S || M < 1 || from < 0 || to <= from || to > S) {
    return Status.BadDimensions;
  }
  for (let s = 0; s < S; s++) {
    const b = load<i32>(blockLengths + (<usize>s << 2));
    if (s != base && (b < 1 || b > m)) return Status.BadDimensions;
  }
  const total = <i64>S * <i64>m;
  for (let k: i64 = 0; k < total; k++) {
    if (!isFinite(load<f64>(R + (<usize>k << 3)))) {
      setBadIndex(<i32>k);
      return Status.NonFinite;
    }
  }
  const st = heap.alloc(RNG_STATE_BYTES);
  const blocks = heap.alloc(<usize>m << 5); // 4 block sums per block (at most m blocks): x, y, x², y²
  rngSeed(st, seed);
  const mU = <u64>m;
  const lim = ((<u64>1 << 32) - mU) % mU;
  const yRow = R + (<usize>base * <usize>m << 3);
  for (let s = 0; s < to; s++) {
    if (s > 0) rngJump(st);
    if (s < from) {
      // a series before the block: its draws replayed, not used (the block's streams as in the whole call)
      if (s != base) skipDraws(st, <i64>M * <i64>(m / load<i32>(blockLengths + (<usize>s << 2))), m);
      continue;
    }
    const o = out + (<usize>(s - from) << 3);
    if (s == base) {
      store<f64>(o, NaN);
      continue;
    }
    const b = load<i32>(blockLengths + (<usize>s << 2));
    const l = m / b;
    const n = <f64>(l * b);
    const rootB = Math.sqrt(<f64>b);
    const xRow = R + (<usize>s * <usize>m << 3);
    const deltaHat = sharpeOf(xRow, m) - sharpeOf(yRow, m);
    const d0 = load<f64>(dHat + (<usize>s << 3));
    let s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
    let s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
    let count = 0;
    for (let k = 0; k < M; k++) {
      let sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0;
      for (let j = 0; j < l; j++) {
        let x = rotl(s1 * 5, 7) * 9;
        let sh = s1 << 17;
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= sh; s3 = rotl(s3, 45);
        let prod = (x >> 32) * mU;
        while ((prod & 0xFFFFFFFF) < lim) {
          x = rotl(s1 * 5, 7) * 9;
          sh = s1 << 17;
          s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= sh; s3 = rotl(s3, 45);
          prod = (x >> 32) * mU;
        }
        let t = <i32>(prod >> 32);
        let bx = 0.0, by = 0.0, bxx = 0.0, byy = 0.0;
        for (let i = 0; i < b; i++) {
          const u = load<f64>(xRow + (<usize>t << 3));
          const v = load<f64>(yRow + (<usize>t << 3));
          bx += u; by += v; bxx += u * u; byy += v * v;
          t++;
          if (t == m) t = 0;
        }
        const at = blocks + (<usize>j << 5);
        store<f64>(at, bx); store<f64>(at, by, 8); store<f64>(at, bxx, 16); store<f64>(at, byy, 24);
        sx += bx; sy += by; sxx += bxx; syy += byy;
      }
      const mx = sx / n, my = sy / n, gx = sxx / n, gy = syy / n;
      const vx = gx - mx * mx, vy = gy - my * my;
      if (!(vx > 0.0 && vy > 0.0)) continue;
      // sd with ddof 1 for Δ*, the moments' (γ − μ²) in the gradient, as for the data
      const delta = mx / Math.sqrt(vx * n / (n - 1.0)) - my / Math.sqrt(vy * n / (n - 1.0));
      const cx = vx * Math.sqrt(vx), cy = vy * Math.sqrt(vy);
      const g0 = gx / cx, g1 = -gy / cy, g2 = -mx / (2.0 * cx), g3 = my / (2.0 * cy);
      let quad = 0.0;
      const fb = <f64>b;
      for (let j = 0; j < l; j++) {
        const at = blocks + (<usize>j << 5);
        // ∇fᵀζ_j, ζ_j = (block sums − b·moments)/√b
        const z = (g0 * (load<f64>(at) - fb * mx) + g1 * (load<f64>(at, 8) - fb * my) +
          g2 * (load<f64>(at, 16) - fb * gx) + g3 * (load<f64>(at, 24) - fb * gy)) / rootB;
        quad += z * z;
      }
      quad /= <f64>l;
      const se = Math.sqrt(quad / n);
      if (se > 0.0 && Math.abs(delta - deltaHat) / se >= d0) count++;
    }
    store<u64>(st, s0, RNG_WORDS_OFFSET);
    store<u64>(st, s1, RNG_WORDS_OFFSET + 8);
    store<u64>(st, s2, RNG_WORDS_OFFSET + 16);
    store<u64>(st, s3, RNG_WORDS_OFFSET + 24);
    store<f64>(o, <f64>(count + 1) / <f64>(M + 1));
  }
  return Status.Ok;
}

/**
 * Advances the generator block at `st` past `count` draws on 0 … m − 1 as the kernels above make them: one output
 * each, and while Lemire's test rejects its high half (probability 2³² mod m / 2³²) one more output. The kernels'
 * step, in locals; nothing else is computed (a split block's earlier series, replayed).
 */
function skipDraws(st: usize, count: i64, m: i32): void {
  const mU = <u64>m;
  const lim = ((<u64>1 << 32) - mU) % mU;
  let s0 = load<u64>(st, RNG_WORDS_OFFSET), s1 = load<u64>(st, RNG_WORDS_OFFSET + 8);
  let s2 = load<u64>(st, RNG_WORDS_OFFSET + 16), s3 = load<u64>(st, RNG_WORDS_OFFSET + 24);
  for (let k: i64 = 0; k < count; k++) {
    let x = rotl(s1 * 5, 7) * 9;
    let sh = s1 << 17;
    s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= sh; s3 = rotl(s3, 45);
    while ((((x >> 32) * mU) & 0xFFFFFFFF) < lim) {
      x = rotl(s1 * 5, 7) * 9;
      sh = s1 << 17;
      s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= sh; s3 = rotl(s3, 45);
    }
  }
  store<u64>(st, s0, RNG_WORDS_OFFSET);
  store<u64>(st, s1, RNG_WORDS_OFFSET + 8);
  store<u64>(st, s2, RNG_WORDS_OFFSET + 16);
  store<u64>(st, s3, RNG_WORDS_OFFSET + 24);
}

/** mean/sd (ddof 1) of m returns at `row`, two-pass. */
function sharpeOf(row: usize, m: i32): f64 {
  let mean = 0.0;
  for (let t = 0; t < m; t++) mean += load<f64>(row + (<usize>t << 3));
  mean /= <f64>m;
  let ss = 0.0;
  for (let t = 0; t < m; t++) {
    const d = load<f64>(row + (<usize>t << 3)) - mean;
    ss += d * d;
  }
  return mean / Math.sqrt(ss / <f64>(m - 1));
}
