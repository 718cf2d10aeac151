/**
 * Typed wrappers over the clustered kernels of assembly/abi/clustered.ts (herc, nco and their clustering;
 * docs/method.md §4.8, §4.9). Each is one call of the protocol of src/engine/protocol.ts (`invoke`: reset, copy in
 * once, one kernel, copy out once, release); status → FolioError (or the `try*` forms' `Outcome`). Inputs are never
 * modified.
 */
import type { Wasm } from "./wasm.js";
import { invoke, pick } from "./protocol.js";
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
  return pick(invoke(wasm, "kHerc", { S: cov, N, k, out: N }), "out");
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
  return invoke(wasm, "kNco", { S: cov, N, k, weights: N, warm: options.warm, intra: N, inter: N });
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
  const o = invoke(wasm, "kCorrelationClusters", { S: cov, N, k, labels: N, Z: Math.max(0, (N - 1) * 4) });
  return valueOf({ ...o, value: { labels: o.value.labels, k: o.count, Z: o.value.Z } }, { what: "clusters" }, N);
}
