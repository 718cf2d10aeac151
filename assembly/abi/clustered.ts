/**
 * ABI: the clustered strategies herc and nco (docs/method.md §4.8, §4.9) and their clustering, for the host's
 * wrappers (src/engine/clustered.ts) and the tests. Each kernel checks the covariance contract of docs/method.md §3.2
 * first (`NonFinite`, `ZeroVariance`, with `lastBadIndex()`), forms σ_i = √Σ_ii as stats/covariance.ts
 * `correlation` does, and never modifies its inputs.
 */
import { Status } from "../shared/status";
import { scratchF64 } from "../memory";
import { setIterations } from "../result";
import { checkCovariance } from "../checks";
import { correlationClusters } from "../cluster/ward";
import { hercWeightsK } from "../strategies/herc";
import { ncoWeightsK } from "../strategies/nco";

/** σ of S (N×N) into fresh scratch (N f64), the same bits as `correlation`'s σ. */
function volatilities(S: usize, N: i32): usize {
  const sd = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    store<f64>(sd + (<usize>i << 3), Math.sqrt(load<f64>(S + (<usize>(i * N + i) << 3))));
  }
  return sd;
}

/** l3herc on S (N×N): out[N]. `k` clusters (≥ 1, capped at N), or 0 for the elbow rule (the strategy's default). */
export function kHerc(S: usize, N: i32, k: i32, out: usize): i32 {
  const st = checkCovariance(S, N);
  return st != Status.Ok ? st : hercWeightsK(S, volatilities(S, N), N, k, out);
}

/**
 * l3nco on S (N×N): out[N]; `k` as for kHerc; `warm` 0 or N previous weights (a QP starting hint); `intra` 0 or N
 * f64 (each asset's weight within its cluster), `inter` 0 or N f64 (the clusters' weights, first k entries).
 */
export function kNco(S: usize, N: i32, k: i32, out: usize, warm: usize, intra: usize, inter: usize): i32 {
  const st = checkCovariance(S, N);
  return st != Status.Ok ? st : ncoWeightsK(S, volatilities(S, N), N, k, out, warm, intra, inter);
}

/**
 * The clustering behind herc and nco: Ward linkage of (1 − ρ)/2 cut into `k` clusters (0 = the elbow rule).
 * labels i32[N] (0 … k−1, numbered by smallest asset index); Z (N−1)×4 f64 rows [a, b, height, size] (scipy
 * format; unused when N = 1). The number of clusters is reported by `lastIterations()`.
 */
export function kCorrelationClusters(S: usize, N: i32, k: i32, labels: usize, Z: usize): i32 {
  const st = checkCovariance(S, N);
  if (st != Status.Ok) return st;
  if (k < 0) return Status.BadDimensions;
  const kk = correlationClusters(S, volatilities(S, N), N, k, labels, Z);
  setIterations(kk);
  return Status.Ok;
}
