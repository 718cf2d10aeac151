/**
 * Typed wrappers over the clustered kernels of assembly/abi/clustered.ts (herc, nco and their clustering;
 * docs/method.md §4.8, §4.9). Same protocol as src/engine/weights.ts: reset, copy in once, one kernel, status →
 * FolioError (or the `try*` forms' `Outcome`), copy out once. Inputs are never modified.
 */
import { arenaOf, type Wasm } from "./wasm.js";
import { type Outcome, valueOf } from "./status.js";
import { need } from "./core.js";

function checkSquare(cov: ArrayLike<number>, N: number): void {
  need(Number.isInteger(N) && N >= 1 && cov.length === N * N,
    `covariance must hold N×N = ${N}×${N} values, got ${cov.length}`);
}

function checkK(k: number): void {
  need(Number.isInteger(k) && k >= 0, `k must be an integer ≥ 0 (0 = the elbow rule), got ${k}`);
}

/** Options of the clustered strategies: `k` clusters (≥ 1, capped at N; 0 or absent = the elbow rule). */
export interface ClusterOptions {
  k?: number;
}

/** l3herc on an N×N covariance, without throwing. */
export function tryHercWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, options: ClusterOptions = {}):
  Outcome<Float64Array> {
  checkSquare(cov, N);
  const k = options.k ?? 0;
  checkK(k);
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out(N);
  const S = a.f64In(cov);
  const status = a.k.kHerc(S, N, k, out);
  a.verify("kHerc");
  return { status, badIndex: a.badIndex, value: a.takeF64(out, N) };
}

/** l3herc: hierarchical equal risk contribution (Ward clusters, inverse variance within, risk split top-down). */
export function hercWeights(wasm: Wasm, cov: ArrayLike<number>, N: number, options: ClusterOptions = {},
  tickers?: readonly string[]): Float64Array {
  return valueOf(tryHercWeights(wasm, cov, N, options), { what: "herc", tickers }, N);
}

/** The parts of an nco solution: the weights, each asset's weight within its cluster, and the clusters' weights. */
export interface NcoParts {
  weights: Float64Array;
  intra: Float64Array;
  inter: Float64Array;
}

/** l3nco on an N×N covariance with its parts, without throwing; `warm`: N previous weights (a QP hint). */
export function tryNcoParts(wasm: Wasm, cov: ArrayLike<number>, N: number,
  options: ClusterOptions & { warm?: ArrayLike<number> } = {}): Outcome<NcoParts> {
  checkSquare(cov, N);
  const k = options.k ?? 0;
  checkK(k);
  if (options.warm !== undefined) need(options.warm.length === N, `warm must hold N = ${N} values`);
  const a = arenaOf(wasm);
  a.begin();
  const out = a.f64Out(N);
  const intra = a.f64Out(N);
  const inter = a.f64Out(N);
  const S = a.f64In(cov);
  const warm = options.warm !== undefined ? a.f64In(options.warm) : 0;
  const status = a.k.kNco(S, N, k, out, warm, intra, inter);
  a.verify("kNco");
  return {
    status,
    badIndex: a.badIndex,
    value: { weights: a.takeF64(out, N), intra: a.takeF64(intra, N), inter: a.takeF64(inter, N) },
  };
}

/** l3nco: nested clustered optimisation (Ward clusters, long-only minimum variance within and across). */
export function ncoWeights(wasm: Wasm, cov: ArrayLike<number>, N: number,
  options: ClusterOptions & { warm?: ArrayLike<number> } = {}, tickers?: readonly string[]): Float64Array {
  return valueOf(tryNcoParts(wasm, cov, N, options), { what: "nco", tickers }, N).weights;
}

/** herc's and nco's clustering: labels (0 … k−1 by smallest asset index), k, and the Ward linkage Z (scipy rows). */
export function correlationClusters(wasm: Wasm, cov: ArrayLike<number>, N: number, k = 0):
  { labels: Int32Array; k: number; Z: Float64Array } {
  checkSquare(cov, N);
  checkK(k);
  const a = arenaOf(wasm);
  a.begin();
  const labels = a.i32Out(N);
  const Z = a.f64Out(Math.max(1, (N - 1) * 4));
  const S = a.f64In(cov);
  const status = a.k.kCorrelationClusters(S, N, k, labels, Z);
  a.verify("kCorrelationClusters");
  const count = a.k.lastIterations();
  return valueOf({
    status,
    badIndex: a.badIndex,
    value: { labels: a.takeI32(labels, N), k: count, Z: N > 1 ? a.takeF64(Z, (N - 1) * 4) : new Float64Array(0) },
  }, { what: "clusters" }, N);
}
