import { Status } from "../shared/status";
import { arenaMark, arenaRelease, scratchF64, scratchI32 } from "../memory";
import { correlationClusters } from "../cluster/ward";
import { clusterMembers } from "./herc";
import { simplexQPWithFactor, WOODBURY_MARGIN } from "../solvers/simplex-qp";

/**
 * l3nco: nested clustered optimisation, López de Prado (2019), long-only minimum variance (docs/method.md §4.9).
 *
 * Method: (1) clusters as herc's (cluster/ward.ts: Ward linkage of D2 = (1 − ρ)/2, cut by the elbow rule),
 *   labels numbered by smallest asset index. (2) Intra: for each cluster c (n_c assets in increasing index),
 *   u_c = argmin ½uᵀΣ_cc u over the simplex (the simplex QP, `simplexQPWithFactor(Σ_cc, n_c, u, 0, 0, hint)`;
 *   a singleton gets [1]). (3) Reduced covariance R_ab = Σ_{i∈a} Σ_{j∈b} (u_i·Σ_ij)·u_j for a ≤ b, summed in
 *   increasing i then j, mirrored (exactly symmetric). (4) Inter: y = argmin ½yᵀRy over the simplex (the same
 *   QP on R, k×k). (5) w_i = u_i·y_{c(i)}.
 * Preconditions: S symmetric PSD, finite, Σ_ii > 0 (checked by the caller); sd = √Σ_ii. Each QP is certified
 *   (KKT residual ≤ 1e-9, docs/method.md §4.3); a singular block is handled by the QP's ridge (minimum-norm optimum).
 *   Permutation-equivariant when no linkage distances tie and every QP has a unique optimum.
 * Convergence: that of the simplex QP (`NotConverged`, `NotCertified`, `NotPositiveDefinite` are passed on).
 * Warm start: `warm` = 0 or N previous nco weights. Cluster c's QP starts from the hint restricted to c (the QP
 *   renormalises it; no positive entry there → cold start), the inter QP from the hint's cluster sums. The hint only
 *   changes the starting face: the answers pass the same certificates (the same point when the blocks are ≻ 0).
 * Edge cases: N = 1 → [1]; k = 1 → gmvp on Σ; k = N (each asset its own cluster) → u = 1, R = Σ, i.e. gmvp
 *   (bit for bit: the same QP on the same matrix); N ≤ 3 → k = 1 (so gmvp).
 * Low rank (docs/method.md §4.9 step 9): with Σ's factor Xf (nf×N, nf < N) the large clusters' QPs solve their
 *   faces through it and R is formed from V = Xf·U as VᵀV plus each cluster's ridge δ_a‖u_a‖² (every cluster holding
 *   a zero-variance portfolio made R from Σ rounding noise, NotPositiveDefinite at N = 2,000 monthly).
 * Layout: S N×N row-major, sd N f64, out N weights, warm 0 or N f64, Xf 0 or nf×N; k (in `ncoWeightsK`) 0 = the elbow rule;
 *   intra/inter: 0, or N f64 for u (per asset) and y (first k entries).
 * Complexity: O(N²) (linkage, reduced covariance; with Xf O(nf·N + nf·k²)) + the QPs on the n_c×n_c blocks and on
 *   R; scratch one N×N block (the linkage's, released before the QPs), max n_c² + k² + O(N) f64 (with Xf also
 *   nf·max(n_c, k)) + the QPs' own.
 * References: López de Prado (2019), "A Robust Estimator of the Efficient Frontier", SSRN 3469961; López de
 *   Prado (2020), Machine Learning for Asset Managers, CUP, ch. 7, doi:10.1017/9781108883658.
 * Departures: the paper clusters with k-means on the correlation matrix with random restarts and a silhouette-
 *   based choice of k; here the deterministic Ward + elbow clustering of herc; the paper's intra/inter allocation is
 *   the unconstrained minimum variance (or max Sharpe), here the long-only minimum variance.
 */
export function ncoWeights(S: usize, sd: usize, N: i32, out: usize, warm: usize, Xf: usize = 0, nf: i32 = 0): Status {
  return ncoWeightsK(S, sd, N, 0, out, warm, 0, 0, Xf, nf);
}

/**
 * `ncoWeights` with the number of clusters (k ≥ 1, capped at N; 0 = elbow rule) and optional intra/inter output.
 * `Xf` (0 = none): a low-rank factor of S (nf×N row-major, XfᵀXf = S, nf < N), as gmvp's (the driver's
 * `Needs.CovarianceFactor`). A QP whose block has more than `factorFrom(nf)` = 2nf + 16 assets (only such a block
 * can have a face the QP solves through the factor) gets the block's factor: the cluster's columns of Xf for Σ_cc,
 * Xf·U (column c = Σ_{i∈c} u_i Xf_{:,i}) for R. Its large rank-deficient faces are then solved through the
 * nf×nf Woodbury system instead of a k×k Cholesky factor that rounding makes indefinite (`NotPositiveDefinite`
 * at N = 2,000 monthly, docs/method.md §4.9 step 9). Blocks up to 2nf + 16 assets get no factor: bit for bit the answer
 * without one.
 */
export function ncoWeightsK(S: usize, sd: usize, N: i32, k: i32, out: usize, warm: usize, intra: usize,
  inter: usize, Xf: usize = 0, nf: i32 = 0): Status {
  if (N < 1 || k < 0) return Status.BadDimensions;
  if (N == 1) {
    store<f64>(out, 1.0);
    if (intra != 0) store<f64>(intra, 1.0);
    if (inter != 0) store<f64>(inter, 1.0);
    return Status.Ok;
  }
  const labels = scratchI32(N);
  const Z = scratchF64((N - 1) * 4);
  const mark = arenaMark();
  k = correlationClusters(S, sd, N, k, labels, Z);
  arenaRelease(mark);
  const start = scratchI32(k + 1);
  const members = scratchI32(N);
  clusterMembers(labels, N, k, start, members);
  let nmax: i32 = 0;
  for (let c: i32 = 0; c < k; c++) {
    nmax = max(nmax, load<i32>(start + (<usize>(c + 1) << 2)) - load<i32>(start + (<usize>c << 2)));
  }
  const Q = scratchF64(nmax * nmax);
  const u = scratchF64(nmax > k ? nmax : k);
  const hint = warm != 0 ? scratchF64(nmax > k ? nmax : k) : 0;
  // the blocks' factors (nf × n, rows contiguous) when a block is large enough to use one
  if (Xf == 0 || nf < 1 || nf >= N) nf = 0;
  const from = factorFrom(nf);
  const Xc = nf > 0 ? scratchF64(nf * (nmax > k ? nmax : k)) : 0;
  const r = <usize>N << 3;
  for (let c: i32 = 0; c < k; c++) {
    const b = load<i32>(start + (<usize>c << 2));
    const n = load<i32>(start + (<usize>(c + 1) << 2)) - b;
    for (let p: i32 = 0; p < n; p++) {
      const Si = S + <usize>load<i32>(members + (<usize>(b + p) << 2)) * r;
      const Qp = Q + <usize>(p * n) * 8;
      for (let q: i32 = 0; q < n; q++) {
        store<f64>(Qp + (<usize>q << 3), load<f64>(Si + (<usize>load<i32>(members + (<usize>(b + q) << 2)) << 3)));
      }
      if (hint != 0) {
        store<f64>(hint + (<usize>p << 3), load<f64>(warm + (<usize>load<i32>(members + (<usize>(b + p) << 2)) << 3)));
      }
    }
    const useX = nf > 0 && n > from;
    if (useX) {
      for (let t: i32 = 0; t < nf; t++) {
        const src = Xf + <usize>t * r;
        const dst = Xc + <usize>(t * n) * 8;
        for (let p: i32 = 0; p < n; p++) {
          store<f64>(dst + (<usize>p << 3), load<f64>(src + (<usize>load<i32>(members + (<usize>(b + p) << 2)) << 3)));
        }
      }
    }
    const m = arenaMark();
    const st = simplexQPWithFactor(Q, n, u, useX ? Xc : 0, useX ? nf : 0, hint);
    arenaRelease(m);
    if (st != Status.Ok) return st;
    for (let p: i32 = 0; p < n; p++) {
      store<f64>(out + (<usize>load<i32>(members + (<usize>(b + p) << 2)) << 3), load<f64>(u + (<usize>p << 3)));
    }
  }
  if (intra != 0) memory.copy(intra, out, <usize>N << 3);
  // reduced covariance R (k×k) in Q's block when it fits, else fresh scratch
  const Rk = nmax * nmax >= k * k ? Q : scratchF64(k * k);
  if (nf > 0) {
    // Low rank: V = Xf·U (nf×k; column c = Σ_{i∈c} u_i·Xf_{:,i}, members in increasing index), R = VᵀV (sums over
    // t = 0 … nf−1, exactly symmetric, R_aa ≥ 0) plus the intra QPs' own ridge δ_a‖u_a‖² on the diagonal
    // (δ_a = 1e-12·trace(Σ_aa)/n_a, the simplex QP's): the inter stage minimises the ridged objective the intra
    // stage did. A cluster with more assets than Σ's rank holds a zero-variance portfolio, so u_aᵀΣ_aa u_a is
    // rounding noise when formed from Σ (possibly < 0: NotPositiveDefinite); from the factor it is ≥ 0, on the
    // scale eps², and the ridge term decides (docs/method.md §4.9 step 9).
    for (let t: i32 = 0; t < nf; t++) {
      const src = Xf + <usize>t * r;
      const dst = Xc + <usize>(t * k) * 8;
      for (let c: i32 = 0; c < k; c++) {
        let v = 0.0;
        const e = load<i32>(start + (<usize>(c + 1) << 2));
        for (let p = load<i32>(start + (<usize>c << 2)); p < e; p++) {
          const i = load<i32>(members + (<usize>p << 2));
          v += load<f64>(out + (<usize>i << 3)) * load<f64>(src + (<usize>i << 3));
        }
        store<f64>(dst + (<usize>c << 3), v);
      }
    }
    for (let a: i32 = 0; a < k; a++) {
      for (let c: i32 = a; c < k; c++) {
        let v = 0.0;
        for (let t: i32 = 0; t < nf; t++) {
          const Vt = Xc + <usize>(t * k) * 8;
          v += load<f64>(Vt + (<usize>a << 3)) * load<f64>(Vt + (<usize>c << 3));
        }
        if (a == c) {
          const ba = load<i32>(start + (<usize>a << 2));
          const ea = load<i32>(start + (<usize>(a + 1) << 2));
          let tr = 0.0;
          let uu = 0.0;
          for (let p = ba; p < ea; p++) {
            const i = load<i32>(members + (<usize>p << 2));
            const ui = load<f64>(out + (<usize>i << 3));
            tr += load<f64>(S + <usize>i * r + (<usize>i << 3));
            uu += ui * ui;
          }
          v += 1e-12 * (tr / <f64>(ea - ba)) * uu;
        }
        store<f64>(Rk + (<usize>(a * k + c) << 3), v);
        store<f64>(Rk + (<usize>(c * k + a) << 3), v);
      }
    }
  } else {
    for (let a: i32 = 0; a < k; a++) {
      const ba = load<i32>(start + (<usize>a << 2));
      const ea = load<i32>(start + (<usize>(a + 1) << 2));
      for (let c: i32 = a; c < k; c++) {
        const bc = load<i32>(start + (<usize>c << 2));
        const ec = load<i32>(start + (<usize>(c + 1) << 2));
        let s = 0.0;
        for (let p = ba; p < ea; p++) {
          const i = load<i32>(members + (<usize>p << 2));
          const Si = S + <usize>i * r;
          const ui = load<f64>(out + (<usize>i << 3));
          for (let q = bc; q < ec; q++) {
            const j = load<i32>(members + (<usize>q << 2));
            s += ui * load<f64>(Si + (<usize>j << 3)) * load<f64>(out + (<usize>j << 3));
          }
        }
        store<f64>(Rk + (<usize>(a * k + c) << 3), s);
        store<f64>(Rk + (<usize>(c * k + a) << 3), s);
      }
    }
  }
  if (hint != 0) {
    for (let c: i32 = 0; c < k; c++) store<f64>(hint + (<usize>c << 3), 0.0);
    for (let i: i32 = 0; i < N; i++) {
      const p = hint + (<usize>load<i32>(labels + (<usize>i << 2)) << 3);
      store<f64>(p, load<f64>(p) + load<f64>(warm + (<usize>i << 3)));
    }
  }
  // no factor for the inter QP: R is V's Gram plus a diagonal, not a Gram (k is the number of clusters: small)
  const m = arenaMark();
  const st = simplexQPWithFactor(Rk, k, u, 0, 0, hint);
  arenaRelease(m);
  if (st != Status.Ok) return st;
  if (inter != 0) memory.copy(inter, u, <usize>k << 3);
  for (let i: i32 = 0; i < N; i++) {
    const p = out + (<usize>i << 3);
    store<f64>(p, load<f64>(p) * load<f64>(u + (<usize>load<i32>(labels + (<usize>i << 2)) << 3)));
  }
  return Status.Ok;
}

/**
 * The smallest block (number of assets) above which a QP of nco gets its low-rank factor: the simplex QP solves a
 * face through the factor only when it holds more than 2nf + 16 assets (solvers/simplex-qp.ts, `WOODBURY_MARGIN`);
 * 0 factor rows → no block gets one.
 */
function factorFrom(nf: i32): i32 {
  return nf > 0 ? 2 * nf + WOODBURY_MARGIN : 0x7fffffff;
}
