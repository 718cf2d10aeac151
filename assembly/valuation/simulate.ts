import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { rngSeed, rngJump, rngBelow, rngUniform } from "../random/xoshiro256";
import {
  ModelCode, RNG_CACHE_OFFSET, RNG_HAS_CACHE_OFFSET, RNG_STATE_BYTES, RNG_WORDS_BYTES, RNG_WORDS_OFFSET,
} from "../shared/vocabulary";
import { fillNormals } from "../random/normal";
import { sharesFrom, valueWithShares } from "./paths";
import { gemmNT } from "../linalg/gemm";
import { checkPrices, checkFinite } from "../checks";
import { RUN_FIELDS, summarizeRun } from "./run-summary";
import { EXP2_CONSTANTS, nativeExp2, nativeExp2Fast } from "../stats/native-exp2";

/**
 * `Math.exp` of both lanes (the compounding P̃[t][i] = P̃[t−1][i]·exp(r[t][i]) two tickers at a time, each lane the
 * scalar's bits: stats/native-exp2.ts): `nativeExp2Fast`, and `nativeExp2` (a call, off the loop's path) when a
 * lane is outside its case.
 */
// @ts-ignore: decorator
@inline function exp2Exact(x: v128, E: usize): v128 {
  const e = nativeExp2Fast(x, E);
  return v128.any_true(f64x2.ne(e, e)) ? nativeExp2(x) : e;
}

/**
 * Check the model parameters of `simulateRuns` / `simulateCloses` (docs/method.md §8): σ finite and > 0
 * (independent, N values) or the lower triangle of L finite with L_ii > 0 (correlated, N×N row-major, checked in
 * row-major order so the first bad entry is reported). Sets lastBadIndex; returns `NonFinite` / `ZeroVariance` / Ok.
 */
function checkScale(scale: usize, model: i32, N: i32): Status {
  if (model == ModelCode.independent) {
    if (!checkFinite(scale, N)) return Status.NonFinite;
    for (let i: i32 = 0; i < N; i++) {
      if (!(load<f64>(scale + (<usize>i << 3)) > 0.0)) {
        setBadIndex(i);
        return Status.ZeroVariance;
      }
    }
    return Status.Ok;
  }
  for (let i: i32 = 0; i < N; i++) {
    for (let j: i32 = 0; j <= i; j++) {
      const idx = i * N + j;
      const v = load<f64>(scale + (<usize>idx << 3));
      if (!isFinite(v)) {
        setBadIndex(idx);
        return Status.NonFinite;
      }
      if (j == i && !(v > 0.0)) {
        setBadIndex(i);
        return Status.ZeroVariance;
      }
    }
  }
  return Status.Ok;
}

/** The scale the generator reads: σ itself (independent), or a scratch copy of L with exact zeros above the diagonal. */
function scaleForModel(scale: usize, model: i32, N: i32): usize {
  if (model == ModelCode.independent) return scale;
  const L = heap.alloc(<usize>(N * N) << 3);
  for (let i: i32 = 0; i < N; i++) {
    for (let j: i32 = 0; j < N; j++) {
      const idx = i * N + j;
      store<f64>(L + (<usize>idx << 3), j <= i ? load<f64>(scale + (<usize>idx << 3)) : 0.0);
    }
  }
  return L;
}

/** Rows per chunk: draws, transform and compounding run chunk by chunk so the block stays in L2 (≈ 128 KiB). */
function chunkRows(N: i32): i32 {
  return max(2, (16384 / N) & ~1);
}

/**
 * One run's simulated closes (docs/method.md §8.2–§8.5 steps 2–4): fills rows 1 … nTest−1 of `P` (nTest×N
 * row-major; row 0 must already hold p0) from the run's generator `cur` (seeded, normal cache as the caller set it).
 * `scale` is σ (independent) or the zero-padded lower L (correlated, from `scaleForModel`); `Z` is chunk×N scratch
 * (correlated only). With `generateBootstrap` (through `generateRun`) this is the single definition of a run's
 * prices: `simulateRuns` values them, `simulateCloses` returns them, so both give the same run k bit for bit.
 */
function generateCloses(cur: usize, mu: usize, scale: usize, model: i32, P: usize, nTest: i32, N: i32,
                        chunk: i32, Z: usize): void {
  const rowBytes = <usize>N << 3;
  // Rows t0 … t0+m−1 (1-based test rows) per chunk. The normal stream continues across chunks exactly as one
  // call would (the pair cache in `cur` carries an odd variate over), so chunking does not change the draws.
  for (let t0: i32 = 1; t0 < nTest; t0 += chunk) {
    generateChunk(cur, mu, scale, model, P + <usize>t0 * rowBytes, min(chunk, nTest - t0), N, Z);
  }
}

/**
 * m consecutive rows of a run's closes under a normal model (`generateCloses`' step for one chunk): the rows at
 * `rows` (m×N), the previous close just before them (rows − N f64), the draws continuing the stream of `cur`.
 * Z: m×N scratch (correlated only).
 */
function generateChunk(cur: usize, mu: usize, scale: usize, model: i32, rows: usize, m: i32, N: i32,
                       Z: usize): void {
  const rowBytes = <usize>N << 3;
  const E = EXP2_CONSTANTS;
  if (model == ModelCode.independent) {
    fillNormals(cur, rows, m * N);
    for (let t: i32 = 0; t < m; t++) {
      const x = rows + <usize>t * rowBytes;
      const prev = x - rowBytes;
      let i: i32 = 0;
      for (; i + 1 < N; i += 2) {
        const off = <usize>i << 3;
        const ret = f64x2.add(v128.load(mu + off), f64x2.mul(v128.load(scale + off), v128.load(x + off)));
        v128.store(x + off, f64x2.mul(v128.load(prev + off), exp2Exact(ret, E)));
      }
      if (i < N) {
        const off = <usize>i << 3;
        const ret = load<f64>(mu + off) + load<f64>(scale + off) * load<f64>(x + off);
        store<f64>(x + off, load<f64>(prev + off) * Math.exp(ret));
      }
    }
  } else {
    fillNormals(cur, Z, m * N);
    gemmNT(Z, N, m, scale, N, N, N, true, rows, N, 1, m);
    for (let t: i32 = 0; t < m; t++) {
      const x = rows + <usize>t * rowBytes;
      const prev = x - rowBytes;
      let i: i32 = 0;
      for (; i + 1 < N; i += 2) {
        const off = <usize>i << 3;
        const ret = f64x2.add(v128.load(mu + off), v128.load(x + off));
        v128.store(x + off, f64x2.mul(v128.load(prev + off), exp2Exact(ret, E)));
      }
      if (i < N) {
        const off = <usize>i << 3;
        store<f64>(x + off, load<f64>(prev + off) * Math.exp(load<f64>(mu + off) + load<f64>(x + off)));
      }
    }
  }
}

/**
 * One run's closes by the stationary block bootstrap (docs/method.md §8.7): fills rows 1 … nTest−1 of `P` (row 0 =
 * p0) from whole rows of `R` (nR×N training log-return vectors). Draw order, from the run's generator `cur`:
 *   t = 1: j = below(nR) (a new block);
 *   t ≥ 2: u = uniform(); if u < pNew: j = below(nR) (a new block), else j = j + 1, and j = 0 when j reaches nR;
 *   then P̃[t][i] = P̃[t−1][i]·exp(R[j][i]) (NativeMath.exp), i = 0 … N−1.
 * `pNew` = 1/L (f64 division) for the mean block length L; `below` is `rngBelow` (unbiased), `uniform` is
 * `rngUniform`. No normals are drawn, so the normal cache is not used.
 */
function generateBootstrap(cur: usize, R: usize, nR: i32, pNew: f64, P: usize, nTest: i32, N: i32): void {
  bootstrapRows(cur, R, nR, pNew, P + (<usize>N << 3), 1, nTest - 1, N);
}

/** The training row the last row of `bootstrapRows` took (its next call continues the block from there). */
let bootstrapRow: i32 = 0;

/**
 * Rows t0 … t0 + m − 1 of a run's bootstrap closes (`generateBootstrap`'s draws, in its order) at `rows` (m×N), the
 * previous close just before them; the block continues from `bootstrapRow` (the row of t0 − 1; not read at t0 = 1).
 */
function bootstrapRows(cur: usize, R: usize, nR: i32, pNew: f64, rows: usize, t0: i32, m: i32, N: i32): void {
  const rowBytes = <usize>N << 3;
  const E = EXP2_CONSTANTS;
  let j: i32 = bootstrapRow;
  for (let t: i32 = t0; t < t0 + m; t++) {
    if (t == 1 || rngUniform(cur) < pNew) {
      j = <i32>rngBelow(cur, <u64>nR);
    } else {
      j++;
      if (j == nR) j = 0;
    }
    const x = rows + <usize>(t - t0) * rowBytes;
    const prev = x - rowBytes;
    const r = R + <usize>j * rowBytes;
    let i: i32 = 0;
    for (; i + 1 < N; i += 2) {
      const off = <usize>i << 3;
      v128.store(x + off, f64x2.mul(v128.load(prev + off), exp2Exact(v128.load(r + off), E)));
    }
    if (i < N) {
      const off = <usize>i << 3;
      store<f64>(x + off, load<f64>(prev + off) * Math.exp(load<f64>(r + off)));
    }
  }
  bootstrapRow = j;
}

/**
 * Check the bootstrap inputs: nRows ≥ 1 with nRows·N < 2³¹ and blockLength finite ≥ 1, else `BadDimensions`; the
 * nRows×N return rows finite, else `NonFinite` (lastBadIndex = flat index).
 */
function checkBootstrap(R: usize, N: i32, nRows: i32, blockLength: f64): Status {
  if (nRows < 1 || nRows > i32.MAX_VALUE / N || !isFinite(blockLength) || !(blockLength >= 1.0)) {
    return Status.BadDimensions;
  }
  if (!checkFinite(R, nRows * N)) return Status.NonFinite;
  return Status.Ok;
}

/** Fill rows 1 … nTest−1 of P for one run of any model (`generateCloses` or `generateBootstrap`). */
function generateRun(cur: usize, mu: usize, scale: usize, model: i32, P: usize, nTest: i32, N: i32, chunk: i32,
                     Z: usize, nRows: i32, pNew: f64): void {
  if (model == ModelCode.bootstrap) generateBootstrap(cur, scale, nRows, pNew, P, nTest, N);
  else generateCloses(cur, mu, scale, model, P, nTest, N, chunk, Z);
}

/** Start run r's generator: copy the four words of `base` into `cur` and empty the normal cache (§8.4). */
function startRun(base: usize, cur: usize): void {
  memory.copy(cur + RNG_WORDS_OFFSET, base + RNG_WORDS_OFFSET, RNG_WORDS_BYTES);
  store<f64>(cur, 0.0, RNG_CACHE_OFFSET);
  store<i32>(cur, 0, RNG_HAS_CACHE_OFFSET);
}

/** The generator of run `runFrom` in a fresh block: `seed` by SplitMix64, then runFrom jumps. */
function firstRunState(seed: u64, runFrom: i32): usize {
  const base = heap.alloc(<usize>RNG_STATE_BYTES);
  rngSeed(base, seed);
  for (let k: i32 = 0; k < runFrom; k++) rngJump(base);
  return base;
}

/** The run layout and model of `simulateRuns` and `simulateSummary` (their `BadDimensions` checks but capital's). */
function runShapeOk(nTest: i32, N: i32, S: i32, runFrom: i32, runCount: i32, model: i32): bool {
  if (nTest < 1 || N < 1 || S < 1 || runCount < 1 || runFrom < 0 || runFrom > i32.MAX_VALUE - runCount) return false;
  return model == ModelCode.independent || model == ModelCode.correlated || model == ModelCode.bootstrap;
}

/**
 * The inputs the draws and the valuation read, as `simulateRuns` documents them: p0 (`BadPrice`), the bootstrap's
 * rows and block length or μ and the scale (`NonFinite`, `ZeroVariance`, `BadDimensions`), W (`NonFinite`); `Ok`.
 */
function drawInputsStatus(mu: usize, scale: usize, model: i32, p0: usize, N: i32, W: usize, S: i32, nRows: i32,
                          blockLength: f64): Status {
  if (!checkPrices(p0, N)) return Status.BadPrice;
  if (model == ModelCode.bootstrap) {
    if (!checkFinite(W, S * N)) return Status.NonFinite;
    const st = checkBootstrap(scale, N, nRows, blockLength);
    if (st != Status.Ok) return st;
  } else {
    if (!checkFinite(mu, N)) return Status.NonFinite;
    if (!checkFinite(W, S * N)) return Status.NonFinite;
    const st = checkScale(scale, model, N);
    if (st != Status.Ok) return st;
  }
  return Status.Ok;
}

/**
 * Seeded Monte Carlo runs of daily prices, each valued for S buy-and-hold series (docs/method.md §8.1–§8.5; the
 * block bootstrap §8.7).
 *
 * Method, per run k = runFrom … runFrom + runCount − 1 (absolute, 0-based):
 *   1. Generator: the xoshiro256** state seeded from `seed` by SplitMix64, then k `jump()`s; empty normal cache.
 *      (The state of run runFrom is reached by runFrom jumps, and each later run's by one more jump from the
 *      previous run's starting state, so run k never depends on runFrom or runCount.)
 *   2. Draws, in the frozen order: for t = 1 … nTest−1, for i = 0 … N−1: z[t][i] = polar normal (§8.4). A run
 *      that draws an odd count leaves its last cached variate unused. (Model `ModelCode.bootstrap` instead draws
 *      row indices, `generateBootstrap`, and its r[t] is training row j: steps 3 and 4 of the normal models
 *      become P̃[t][i] = P̃[t−1][i]·exp(R[j][i]).)
 *   3. Log-returns: model `ModelCode.independent`: r[t][i] = μ_i + σ_i·z[t][i] (σ_i·z first, then + μ_i);
 *      model `ModelCode.correlated`: r[t] = μ + L·z[t], (L·z[t])_i = Σ_{j≤i} L_ij z[t][j] summed by `gemmNT`
 *      (linalg/gemm.ts: lane-split order of blas.dot; for even i < N−1 the sum runs to j = i + 1 over an exact
 *      zero), then + μ_i.
 *   4. Prices: P̃[0] = p0 (the real first test close); P̃[t][i] = P̃[t−1][i]·exp(r[t][i]) with NativeMath.exp
 *      (two tickers per f64x2, each lane its bits: stats/native-exp2.ts).
 *   5. Values: the paths valuation (§7) of the S weight vectors on P̃, with V[s][0] = capital exactly and shares
 *      bought at p0 (the same shares in every run).
 * Layout: `mu` N; `scale` independent: σ (N), correlated: L (N×N row-major; only the lower triangle incl. the
 *   diagonal is read, it is copied to scratch with zeros above); `p0` N; `W` S×N row-major; `out` runCount×S×nTest
 *   (run-major, then series-major: out[(r·S + s)·nTest + t]). Bootstrap: `scale` = R, nRows×N row-major
 *   training log-return vectors (the host demeans them for drift "zero"), `mu` is not read; `nRows` and
 *   `blockLength` (the mean block length L ≥ 1) are read by the bootstrap only (appended parameters).
 * Preconditions / status: nTest, N, S, runCount ≥ 1, runFrom ≥ 0, runFrom + runCount ≤ 2³¹−1, model a `ModelCode`,
 *   capital finite > 0, for the bootstrap nRows ≥ 1 (nRows·N < 2³¹) and blockLength finite ≥ 1, else
 *   `BadDimensions`; bootstrap rows R finite, else `NonFinite`; p0 finite > 0, else `BadPrice` (lastBadIndex = i); μ, σ / lower L,
 *   W finite, else `NonFinite` (lastBadIndex = flat index in that array); σ_i ≤ 0 (independent) or L_ii ≤ 0
 *   (correlated), else `ZeroVariance` (lastBadIndex = i). Simulated prices may overflow to +∞ only for absurd μ, σ (not checked).
 * Convergence: not iterative (the polar rejection loop terminates with probability 1).
 * Complexity per run: (nTest−1)·N normals and exps (bootstrap: (nTest−1)·N exps and ≈ (nTest−1)(1 + 1/L) steps); the correlated model adds (nTest−1)·N² flops; valuation
 *   2·S·N·(nTest−1) flops. Scratch: nTest·N (prices) + chunk·N (draws, correlated only) + S·N + N² (correlated) f64, allocated once.
 *   Draws, transform and compounding run in chunks of ≈ 16384/N rows (≈ 128 KiB) so each chunk is produced and
 *   consumed while it is in cache; the chunking does not change any value (the draw stream is continuous).
 * References: docs/method.md §8; Blackman & Vigna (2021) doi:10.1145/3460772; Marsaglia & Bray (1964)
 *   doi:10.1137/1006063. Departure: none (no −σ²/2 drift correction: μ is already the mean log-return).
 */
export function simulateRuns(mu: usize, scale: usize, model: i32, p0: usize, nTest: i32, N: i32, W: usize, S: i32,
                             seed: u64, runFrom: i32, runCount: i32, capital: f64, out: usize,
                             nRows: i32, blockLength: f64): Status {
  setBadIndex(-1);
  if (!runShapeOk(nTest, N, S, runFrom, runCount, model)) return Status.BadDimensions;
  if (!(capital > 0.0) || !isFinite(capital)) return Status.BadDimensions;
  const drawn = drawInputsStatus(mu, scale, model, p0, N, W, S, nRows, blockLength);
  if (drawn != Status.Ok) return drawn;

  const L = model == ModelCode.bootstrap ? scale : scaleForModel(scale, model, N);
  const pNew = model == ModelCode.bootstrap ? 1.0 / blockLength : 0.0;
  const steps = nTest - 1;
  const chunk = chunkRows(N);
  const sh = heap.alloc(<usize>(S * N) << 3);
  sharesFrom(W, S, N, p0, capital, sh);
  const P = heap.alloc(<usize>(nTest * N) << 3);
  memory.copy(P, p0, <usize>N << 3);
  const Z: usize = model == ModelCode.correlated && steps > 0 ? heap.alloc(<usize>(min(chunk, steps) * N) << 3) : 0;
  const base = firstRunState(seed, runFrom);
  const cur = heap.alloc(<usize>RNG_STATE_BYTES);
  const runBytes = <usize>(S * nTest) << 3;

  for (let r: i32 = 0; r < runCount; r++) {
    startRun(base, cur);
    generateRun(cur, mu, L, model, P, nTest, N, chunk, Z, nRows, pNew);
    valueWithShares(P, nTest, N, sh, S, capital, out + <usize>r * runBytes);
    rngJump(base);
  }
  return Status.Ok;
}

/**
 * The simulated closes of runs runFrom … runFrom + runCount − 1 (docs/method.md §8, steps 1–4 of `simulateRuns`),
 * for callers that value them otherwise than buy-and-hold (e.g. rebalancing on simulated prices).
 *
 * Method: exactly `simulateRuns` without step 5: the same generator per absolute run k and the same
 *   `generateRun`, so valuing run k's closes with `valuePaths` gives simulateRuns' run k bit for bit.
 * Layout: `mu`, `scale`, `p0` as in `simulateRuns`; `out` runCount×nTest×N (run-major, then row-major closes:
 *   out[(r·nTest + t)·N + i]); row 0 of every run is p0.
 * Preconditions / status: as `simulateRuns` without W, S, capital: nTest, N, runCount ≥ 1, runFrom ≥ 0,
 *   runFrom + runCount ≤ 2³¹−1, model a `ModelCode`, else `BadDimensions`; p0 finite > 0, else `BadPrice`; μ, σ /
 *   lower L finite, else `NonFinite`; σ_i ≤ 0 or L_ii ≤ 0, else `ZeroVariance` (lastBadIndex as there); the
 *   bootstrap's nRows, blockLength, R as in `simulateRuns`.
 * Complexity per run: as `simulateRuns` without the valuation. Scratch: chunk·N (correlated draws) + N² (correlated).
 */
export function simulateCloses(mu: usize, scale: usize, model: i32, p0: usize, nTest: i32, N: i32, seed: u64,
                               runFrom: i32, runCount: i32, out: usize, nRows: i32, blockLength: f64): Status {
  setBadIndex(-1);
  if (nTest < 1 || N < 1 || runCount < 1 || runFrom < 0 || runFrom > i32.MAX_VALUE - runCount) {
    return Status.BadDimensions;
  }
  if (model != ModelCode.independent && model != ModelCode.correlated && model != ModelCode.bootstrap) {
    return Status.BadDimensions;
  }
  if (!checkPrices(p0, N)) return Status.BadPrice;
  const st = model == ModelCode.bootstrap
    ? checkBootstrap(scale, N, nRows, blockLength)
    : checkFinite(mu, N) ? checkScale(scale, model, N) : Status.NonFinite;
  if (st != Status.Ok) return st;

  const L = model == ModelCode.bootstrap ? scale : scaleForModel(scale, model, N);
  const pNew = model == ModelCode.bootstrap ? 1.0 / blockLength : 0.0;
  const steps = nTest - 1;
  const chunk = chunkRows(N);
  const Z: usize = model == ModelCode.correlated && steps > 0 ? heap.alloc(<usize>(min(chunk, steps) * N) << 3) : 0;
  const base = firstRunState(seed, runFrom);
  const cur = heap.alloc(<usize>RNG_STATE_BYTES);
  const runBytes = <usize>(nTest * N) << 3;

  for (let r: i32 = 0; r < runCount; r++) {
    const P = out + <usize>r * runBytes;
    memory.copy(P, p0, <usize>N << 3);
    startRun(base, cur);
    generateRun(cur, mu, L, model, P, nTest, N, chunk, Z, nRows, pNew);
    rngJump(base);
  }
  return Status.Ok;
}

/**
 * The runs of `simulateRuns`, each summarised as it is made (docs/method.md §8.13): run r's S×nTest values (the
 * same bits as `simulateRuns`' run r) never leave this call; `summarizeRun` (valuation/run-summary.ts) writes its
 * figures to `rec` (runCount×S×RUN_FIELDS), its band values to `band` (S×P×runCount, column-major: band row j of
 * series s of run r at band[(s·P + j)·runCount + r], so the summary reads a column's runs at once) and its paid flows to `paid`
 * (runCount×S×max(E, 1)). `bi` is the benchmark's series (−1: none); `iSpec`/`fSpec` the flows, band rows and
 * anniversaries as `summarizeRun` reads them; `rf` the daily risk-free log rate ln(1 + r)/252 of the relative
 * figures' alpha (docs/method.md §7.6; 0: none). Checks and statuses as `simulateRuns`; E, P, Wn ≥ 0 and every row in
 * 0 … nTest−1 and rf finite, else `BadDimensions`.
 * Complexity per run: `simulateRuns`' plus O(S·nTest) (S·(nTest − 1) logarithms with a benchmark). Scratch: one
 * run's values (S×nTest) and 10·nTest f64 beside `simulateRuns`' scratch, allocated once.
 */
export function simulateSummary(mu: usize, scale: usize, model: i32, p0: usize, nTest: i32, N: i32, W: usize, S: i32,
                                seed: u64, runFrom: i32, runCount: i32, capital: f64, nRows: i32, blockLength: f64,
                                bi: i32, iSpec: usize, fSpec: usize, rec: usize, band: usize, paid: usize,
                                rf: f64): Status {
  setBadIndex(-1);
  if (!runShapeOk(nTest, N, S, runFrom, runCount, model)) return Status.BadDimensions;
  if (!(capital > 0.0) || !isFinite(capital) || bi < -1 || bi >= S || !isFinite(rf)) return Status.BadDimensions;
  const E = load<i32>(iSpec);
  const P = load<i32>(iSpec, 4);
  const Wn = load<i32>(iSpec, 8);
  if (E < 0 || P < 0 || Wn < 0) return Status.BadDimensions;
  for (let j: i32 = 0; j < E + P + Wn; j++) {
    const t = load<i32>(iSpec + 12 + (<usize>j << 2));
    if (t < 0 || t >= nTest) return Status.BadDimensions;
  }
  const drawn = drawInputsStatus(mu, scale, model, p0, N, W, S, nRows, blockLength);
  if (drawn != Status.Ok) return drawn;

  const L = model == ModelCode.bootstrap ? scale : scaleForModel(scale, model, N);
  const pNew = model == ModelCode.bootstrap ? 1.0 / blockLength : 0.0;
  const steps = nTest - 1;
  const chunk = min(chunkRows(N), max(steps, 1));
  // the distinct weight vectors (D of the S: equal rows give equal shares, values and figures, bit for bit)
  const rep = heap.alloc(<usize>S << 2);
  const D = distinctRows(W, S, N, rep);
  const Wd = heap.alloc(<usize>(D * N) << 3);
  for (let s: i32 = 0; s < S; s++) {
    const d = load<i32>(rep + (<usize>s << 2));
    memory.copy(Wd + (<usize>(d * N) << 3), W + (<usize>(s * N) << 3), <usize>N << 3);
  }
  const sh = heap.alloc(<usize>(D * N) << 3);
  sharesFrom(Wd, D, N, p0, capital, sh);
  const bd = bi < 0 ? -1 : load<i32>(rep + (<usize>bi << 2));
  // one chunk of closes and the close before it: each chunk is valued while it is in cache
  const rowBytes = <usize>N << 3;
  const Pc = heap.alloc(<usize>(chunk + 1) * rowBytes);
  const Z: usize = model == ModelCode.correlated && steps > 0 ? heap.alloc(<usize>chunk * rowBytes) : 0;
  const base = firstRunState(seed, runFrom);
  const cur = heap.alloc(<usize>RNG_STATE_BYTES);
  const values = heap.alloc(<usize>(D * nTest) << 3);
  const Vf = heap.alloc(<usize>nTest << 5);
  const lr = heap.alloc(<usize>nTest << 5);
  const lb = heap.alloc(<usize>nTest << 4);
  const Ecols = max(E, 1);
  const recD = heap.alloc(<usize>(D * RUN_FIELDS) << 3);
  const bandD = heap.alloc(<usize>(D * P) << 3);
  const paidD = heap.alloc(<usize>(D * Ecols) << 3);
  const recBytes = <usize>(S * RUN_FIELDS) << 3;
  const paidBytes = <usize>(S * Ecols) << 3;

  for (let r: i32 = 0; r < runCount; r++) {
    startRun(base, cur);
    valuedRun(cur, mu, L, model, p0, nTest, N, chunk, Z, nRows, pNew, Pc, sh, D, capital, values);
    summarizeRun(values, D, nTest, bd, iSpec, fSpec, recD, bandD, paidD, Vf, lr, lb, rf);
    spreadRecords(rep, S, recD, bandD, paidD, P, Ecols, rec + <usize>r * recBytes, band + (<usize>r << 3), runCount,
      paid + <usize>r * paidBytes);
    rngJump(base);
  }
  return Status.Ok;
}

/**
 * The distinct rows of W (S×N): rep[s] = the index, in order of first appearance, of the first row equal to row s
 * bit for bit; returns their count D. O(S²·N), once per call.
 */
function distinctRows(W: usize, S: i32, N: i32, rep: usize): i32 {
  let D: i32 = 0;
  for (let s: i32 = 0; s < S; s++) {
    let d: i32 = -1;
    for (let q: i32 = 0; q < s && d < 0; q++) {
      if (memory.compare(W + (<usize>(q * N) << 3), W + (<usize>(s * N) << 3), <usize>N << 3) == 0) {
        d = load<i32>(rep + (<usize>q << 2));
      }
    }
    if (d < 0) d = D++;
    store<i32>(rep + (<usize>s << 2), d);
  }
  return D;
}

/**
 * One run's buy-and-hold values (`generateRun`, then `valueWithShares`, the same bits) of the D share rows `sh`
 * into `values` (D×nTest), chunk by chunk: each chunk of closes is made in `Pc` ((chunk + 1)×N: the close before
 * it, then the chunk) and valued there while it is in cache (`gemmNT`'s sums do not depend on the rows of a call).
 */
function valuedRun(cur: usize, mu: usize, L: usize, model: i32, p0: usize, nTest: i32, N: i32, chunk: i32, Z: usize,
                   nRows: i32, pNew: f64, Pc: usize, sh: usize, D: i32, capital: f64, values: usize): void {
  const rowBytes = <usize>N << 3;
  for (let d: i32 = 0; d < D; d++) store<f64>(values + (<usize>(d * nTest) << 3), capital);
  memory.copy(Pc, p0, rowBytes);
  for (let t0: i32 = 1; t0 < nTest; t0 += chunk) {
    const m = min(chunk, nTest - t0);
    const rows = Pc + rowBytes;
    if (model == ModelCode.bootstrap) bootstrapRows(cur, L, nRows, pNew, rows, t0, m, N);
    else generateChunk(cur, mu, L, model, rows, m, N, Z);
    gemmNT(rows, N, m, sh, N, D, N, false, values + (<usize>t0 << 3), 1, nTest);
    memory.copy(Pc, rows + <usize>(m - 1) * rowBytes, rowBytes);
  }
}

/**
 * Run r's records of the D distinct series (`summarizeRun`'s) copied to each of the S series (rep[s]): the record and
 * the paid flows at run r's place, the band values into run r's slot of each column (`band` = r's slot of column 0,
 * columns `runCount` values apart).
 */
function spreadRecords(rep: usize, S: i32, recD: usize, bandD: usize, paidD: usize, P: i32, Ecols: i32, rec: usize,
                       band: usize, runCount: i32, paid: usize): void {
  const colBytes = <usize>runCount << 3;
  for (let s: i32 = 0; s < S; s++) {
    const d = load<i32>(rep + (<usize>s << 2));
    memory.copy(rec + (<usize>(s * RUN_FIELDS) << 3), recD + (<usize>(d * RUN_FIELDS) << 3), <usize>RUN_FIELDS << 3);
    const from = bandD + (<usize>(d * P) << 3);
    const to = band + <usize>(s * P) * colBytes;
    for (let j: i32 = 0; j < P; j++) store<f64>(to + <usize>j * colBytes, load<f64>(from + (<usize>j << 3)));
    memory.copy(paid + (<usize>(s * Ecols) << 3), paidD + (<usize>(d * Ecols) << 3), <usize>Ecols << 3);
  }
}
