/**
 * ABI: random generation, valuation and simulation (issue #3). Byte-offset pointers, row-major f64, i32 Status
 * returns. u64/i64 parameters and results cross to JavaScript as BigInt (a u64 result arrives signed: the host
 * applies BigInt.asUintN(64, ·)).
 *
 * RNG state block (RNG_STATE_BYTES, caller-allocated, 8-byte aligned): the four u64 xoshiro256** words at
 * RNG_WORDS_OFFSET, the cached normal f64 at RNG_CACHE_OFFSET, the i32 has-cache flag at RNG_HAS_CACHE_OFFSET
 * (assembly/shared/vocabulary.ts; see assembly/random/xoshiro256.ts).
 */
import { rngSeed, rngJump, rngNext, rngUniform, rngBelow } from "../random/xoshiro256";
import { fillNormals, fillNormalsPair } from "../random/normal";
import { valuePaths } from "../valuation/paths";
import { dollarsJson } from "../valuation/dollars";
import { simulateCloses, simulateRuns, simulateSummary } from "../valuation/simulate";
import { fdlibmLog, fdlibmLog2 } from "../stats/fdlibm-log";
import { nativeExp2 } from "../stats/native-exp2";
import { nativeLog2 } from "../random/native-log2";

/** Seed the RNG_STATE_BYTES block at `state` (SplitMix64 expansion of `seed`, empty normal cache). */
export function kRngSeed(state: usize, seed: u64): void {
  rngSeed(state, seed);
}
/** Advance the block at `state` by 2¹²⁸ steps (the standard xoshiro256** jump). */
export function kRngJump(state: usize): void {
  rngJump(state);
}
/** Next raw u64 output. */
export function kRngNext(state: usize): u64 {
  return rngNext(state);
}
/** Next uniform in [0, 1): (next() >> 11)·2⁻⁵³. */
export function kRngUniform(state: usize): f64 {
  return rngUniform(state);
}
/** Next uniform integer in [0, n) without modulo bias (n ≥ 1; n < 1 returns −1 and draws nothing). */
export function kRngBelow(state: usize, n: i32): i32 {
  if (n < 1) return -1;
  return <i32>rngBelow(state, <u64>n);
}
/** Write `n` polar normals to `out` (f64[n]), using and updating the block's normal cache. */
export function kRngNormals(state: usize, out: usize, n: i32): void {
  fillNormals(state, out, n);
}
/** `kRngNormals` of two blocks at once (two-lane generator, random/normal.ts `fillNormalsPair`): the same values. */
export function kRngNormalsPair(stateA: usize, stateB: usize, outA: usize, outB: usize, n: i32): void {
  fillNormalsPair(stateA, outA, stateB, outB, n);
}
/**
 * Dollar values as JSON text after their date keys (the service's response bodies): see valuation/dollars.ts for the
 * layout of `keys`, `out` and the in/out `state` (next day, bytes written), and which values are left to the host.
 */
export function kDollarsJson(values: usize, n: i32, keys: usize, width: i32, out: usize, state: usize): i32 {
  return dollarsJson(values, n, keys, width, out, state);
}
/** Buy-and-hold values: P nTest×N, W S×N → out S×nTest (series-major). See valuation/paths.ts. */
export function kValuePaths(P: usize, nTest: i32, N: i32, W: usize, S: i32, capital: f64, out: usize): i32 {
  return valuePaths(P, nTest, N, W, S, capital, out);
}
/**
 * Simulated runs runFrom … runFrom+runCount−1: out runCount×S×nTest. `model` a ModelCode: independent (scale = σ,
 * N), correlated (scale = lower Cholesky L, N×N) or bootstrap (scale = nRows×N training log-returns, mean block
 * length blockLength; the last two parameters are read by the bootstrap only). See valuation/simulate.ts.
 */
export function kSimulateRuns(mu: usize, scale: usize, model: i32, p0: usize, nTest: i32, N: i32, W: usize, S: i32,
                              seed: u64, runFrom: i32, runCount: i32, capital: f64, out: usize,
                              nRows: i32, blockLength: f64): i32 {
  return simulateRuns(mu, scale, model, p0, nTest, N, W, S, seed, runFrom, runCount, capital, out, nRows,
    blockLength);
}
/**
 * The simulated closes of runs runFrom … runFrom+runCount−1: out runCount×nTest×N (row 0 of each run = p0), the
 * same runs as kSimulateRuns (valued buy-and-hold they give its values bit for bit). See valuation/simulate.ts.
 */
export function kSimulateCloses(mu: usize, scale: usize, model: i32, p0: usize, nTest: i32, N: i32, seed: u64,
                                runFrom: i32, runCount: i32, out: usize, nRows: i32, blockLength: f64): i32 {
  return simulateCloses(mu, scale, model, p0, nTest, N, seed, runFrom, runCount, out, nRows, blockLength);
}
/**
 * The runs of kSimulateRuns summarised in place (docs/method.md §8.13): per run and series the figures of
 * valuation/run-summary.ts (`rec` runCount×S×16), the band values (`band` S×P×runCount, column-major) and the flows
 * paid (`paid` runCount×S×max(E, 1)); `iSpec` [E, P, Wn, flow rows, band rows, anniversary rows], `fSpec` [amounts, rates,
 * anniversary inflation factors]; `bi` the benchmark's series or −1; `rf` the daily risk-free log rate of alpha (0:
 * none). See valuation/simulate.ts `simulateSummary`.
 */
export function kSimulateSummary(mu: usize, scale: usize, model: i32, p0: usize, nTest: i32, N: i32, W: usize, S: i32,
                                 seed: u64, runFrom: i32, runCount: i32, capital: f64, nRows: i32, blockLength: f64,
                                 bi: i32, iSpec: usize, fSpec: usize, rec: usize, band: usize, paid: usize,
                                 rf: f64): i32 {
  return simulateSummary(mu, scale, model, p0, nTest, N, W, S, seed, runFrom, runCount, capital, nRows, blockLength,
    bi, iSpec, fSpec, rec, band, paid, rf);
}
/**
 * `Math.log` as V8 computes it (fdlibm's log; stats/fdlibm-log.ts): out[i] = log(x[i]), pairs by `fdlibmLog2` (the
 * summary's f64x2 form, so the test of this export covers it), an odd last one by `fdlibmLog`.
 */
export function kFdlibmLog(x: usize, n: i32, out: usize): i32 {
  let i: i32 = 0;
  for (; i + 1 < n; i += 2) v128.store(out + (<usize>i << 3), fdlibmLog2(v128.load(x + (<usize>i << 3))));
  if (i < n) store<f64>(out + (<usize>i << 3), fdlibmLog(load<f64>(x + (<usize>i << 3))));
  return 0;
}
/**
 * The engine's exponential two ways, for tests: `pairs[i]` by `nativeExp2` (stats/native-exp2.ts, the f64x2 form the
 * generation compounds with; an odd last one by `Math.exp`), `scalar[i]` = `Math.exp(x[i])` (NativeMath.exp).
 */
export function kNativeExp(x: usize, n: i32, pairs: usize, scalar: usize): i32 {
  let i: i32 = 0;
  for (; i + 1 < n; i += 2) v128.store(pairs + (<usize>i << 3), nativeExp2(v128.load(x + (<usize>i << 3))));
  if (i < n) store<f64>(pairs + (<usize>i << 3), Math.exp(load<f64>(x + (<usize>i << 3))));
  for (let j: i32 = 0; j < n; j++) store<f64>(scalar + (<usize>j << 3), Math.exp(load<f64>(x + (<usize>j << 3))));
  return 0;
}
/**
 * The normals' logarithm two ways, for tests: `pairs[i]` by `nativeLog2` (random/native-log2.ts, the f64x2 form the
 * polar method takes its logs with; an odd last one by `Math.log`), `scalar[i]` = `Math.log(x[i])` (NativeMath.log).
 */
export function kNativeLog(x: usize, n: i32, pairs: usize, scalar: usize): i32 {
  let i: i32 = 0;
  for (; i + 1 < n; i += 2) v128.store(pairs + (<usize>i << 3), nativeLog2(v128.load(x + (<usize>i << 3))));
  if (i < n) store<f64>(pairs + (<usize>i << 3), Math.log(load<f64>(x + (<usize>i << 3))));
  for (let j: i32 = 0; j < n; j++) store<f64>(scalar + (<usize>j << 3), Math.log(load<f64>(x + (<usize>j << 3))));
  return 0;
}
