import { Status } from "../shared/status";
import { HrpCode } from "../shared/vocabulary";
import { arenaMark, arenaRelease, scratchF64, scratchI32 } from "../memory";
import {
  correlationDistance, distanceOfDistances, distancesFromGram, leafOrder, paddedOrder, singleLinkage,
} from "../cluster/linkage";
import { SYRK_TJ, syrkUpperRows } from "../linalg/gemm";
import { prunedLinkageApplies, prunedSingleLinkage } from "../cluster/mst";

/**
 * Rows r0 … r1−1 of the Gram matrix G = DDᵀ behind the paper variant's distance of distances (docs/method.md §4.7
 * step 2; D the HRP distances of C, zero-padded to N' = `paddedOrder(N)`): G_jk for r0 ≤ j < r1, j ≤ k < N at
 * out + ((j − r0)·N' + k)·8 (the other entries of the (r1 − r0)×N' block are 0). Bit-identical to the rows that
 * `hrpTree` computes itself (linalg/gemm.ts `syrkUpperRows`), so the blocks of several calls put together in an
 * N'×N' block are the `gram` that `hrpTree` accepts: the cubic part of the paper HRP spread over several workers.
 * Preconditions: C as in `hrpTree`; r0 a multiple of `HRP_GRAM_ROWS`, r0 < r1 ≤ N', r1 a multiple of
 *   `HRP_GRAM_ROWS` or N'; else `BadDimensions`. Complexity: 2N' flops per entry; scratch N'² f64 (D).
 */
export function hrpGramRows(C: usize, N: i32, r0: i32, r1: i32, out: usize): Status {
  const Np = paddedOrder(N);
  if (N < 1 || r0 < 0 || r0 >= r1 || r1 > Np || r0 % HRP_GRAM_ROWS != 0 || (r1 % HRP_GRAM_ROWS != 0 && r1 != Np)) {
    return Status.BadDimensions;
  }
  const Dp = scratchF64(Np * Np);
  memory.fill(Dp, 0, <usize>(Np * Np) << 3);
  correlationDistance(C, N, Dp, Np);
  memory.fill(out, 0, <usize>((r1 - r0) * Np) << 3);
  syrkUpperRows(Dp, Np, N, r0, r1, out);
  return Status.Ok;
}

/** The row granularity of `hrpGramRows` blocks: the Gram's tile rows (linalg/gemm.ts SYRK_TJ). */
export const HRP_GRAM_ROWS: i32 = SYRK_TJ;


/**
 * HRP tree: distance matrix → single linkage Z → leaf order (docs/method.md §4.7 steps 1–4).
 * Method: d = √(clip((1−ρ)/2, 0, 1)); paper variant: d̃ = Euclidean distance between rows of d (Gram form, see
 *   `distanceOfDistances`), direct variant: d itself; scipy-exact single linkage (`singleLinkage`: Prim from node
 *   0 with lowest-index ties, stable sort, union–find relabel); pre-order leaves (`leafOrder`).
 * Layout: C N×N correlation, or with `sd` ≠ 0 the covariance Σ and `sd` its σ (N f64, σ_i = √Σ_ii): ρ is then
 *   formed from Σ entry by entry (`correlationDistance`: the same bits, no N² block for C); order i32[N]; Z (N−1)×4
 *   f64 rows [a, b, height, size] (unused for N = 1); `gram`
 *   0, or (paper variant) N'×N' holding the upper triangle and diagonal of G = DDᵀ as `hrpGramRows` computes it
 *   (read, not modified): the distance of distances then starts from it instead of computing it (same bits);
 *   `X` 0, or the n×N observations behind C (paper variant, no `gram`): where `prunedLinkageApplies(N, n)`, the
 *   single linkage of d̃ is found without the Gram (cluster/mst.ts `prunedSingleLinkage`: the same Z bit for bit,
 *   the dense path when its bounds do not pay).
 * Preconditions: C finite with unit diagonal; variant `HrpCode.paper` (distance of distances, the default) or
 *   `HrpCode.direct` (single linkage on d), else `BadDimensions`.
 * Convergence: not iterative. Complexity: paper ≈ N³ flops (distance of distances; with `X` on whole-market
 *   windows N²·(n + 1) plus N' per pair the bounds do not skip), direct O(N²); scratch N'² + 64N' f64 (paper; N' = N
 *   rounded up to a multiple of 4; + ≈ (3n + 11)·N' with `X`), N² (direct).
 * References: López de Prado (2016), doi:10.3905/jpm.2016.42.4.059; scipy.cluster.hierarchy (linkage, leaves_list).
 */
export function hrpTree(C: usize, N: i32, variant: i32, order: usize, Z: usize, gram: usize = 0, sd: usize = 0,
  X: usize = 0, n: i32 = 0): Status {
  if (N < 1) return Status.BadDimensions;
  if (variant != HrpCode.paper && variant != HrpCode.direct) return Status.BadDimensions;
  if (N == 1) {
    store<i32>(order, 0);
    return Status.Ok;
  }
  if (variant == HrpCode.paper) {
    // d in a zero-padded N'×N' block, turned into d̃ in place by the distance of distances (one N'² block)
    const Np = paddedOrder(N);
    const Dp = scratchF64(Np * Np);
    if (gram != 0) {
      memory.copy(Dp, gram, <usize>(Np * Np) << 3);
      distancesFromGram(Dp, N);
    } else {
      memory.fill(Dp, 0, <usize>(Np * Np) << 3);
      correlationDistance(C, N, Dp, Np, sd);
      // whole-market windows: the same merges without the Gram (cluster/mst.ts), unless its bounds do not pay
      if (X != 0 && prunedLinkageApplies(N, n) && prunedSingleLinkage(Dp, N, X, n, Z)) {
        leafOrder(Z, N, order);
        return Status.Ok;
      }
      distanceOfDistances(Dp, N);
    }
    singleLinkage(Dp, N, Z, Np);
  } else {
    const D = scratchF64(N * N);
    correlationDistance(C, N, D, N, sd);
    singleLinkage(D, N, Z);
  }
  leafOrder(Z, N, order);
  return Status.Ok;
}

/**
 * l3hrp: hierarchical risk parity, López de Prado (2016), as in the paper by default (docs/method.md §4.7).
 *
 * Method: tree as in `hrpTree`; then recursive bisection by position: start with w = 1 and the whole order;
 *   split every list of ≥ 2 items into L = first ⌊n/2⌋, R = the rest; cluster variance V = ṽᵀΣ_sub ṽ with
 *   ṽ ∝ 1/diag(Σ_sub) (inverse *variance*, normalised); α = 1 − V_L/(V_L + V_R); w[L] *= α, w[R] *= 1 − α.
 *   Splits are processed depth-first (the result does not depend on the order).
 * Preconditions: S covariance with Σ_ii > 0 and C its correlation matrix (validated by the caller). Works for
 *   singular Σ (no inversion). Not permutation-equivariant: the request order is the asset index.
 * Convergence: not iterative. Edge cases: N = 1 → [1]; N = 2 and diagonal Σ → inverse variance; if both cluster
 *   variances are 0 (a long-only zero-variance split) α = ½.
 * Layout: S N×N covariance; C its correlation, or 0 with `sd` = σ (N f64, σ_i = √Σ_ii: the distances are then
 *   formed from S, see `hrpTree`); out N weights; order i32[N] and Z as in `hrpTree`, or 0 for scratch; `X`, `n`
 *   the observations behind S for `hrpTree`'s pruned linkage, or 0.
 * Complexity: tree as above, bisection O(N² log N) worst case on Σ permuted into the leaf order and divided by
 *   its column variances (N² f64 in the tree's released scratch); scratch max(that of the tree, N² + 3N f64),
 *   plus order and Z when 0.
 * References: López de Prado (2016), JPM 42(4):59–69, doi:10.3905/jpm.2016.42.4.059, SSRN 2708678.
 * Departures: none from the paper variant; `direct` = PyPortfolioOpt's linkage input. No optimal leaf ordering.
 */
export function hrpWeights(S: usize, C: usize, N: i32, variant: i32, out: usize, order: usize, Z: usize,
  gram: usize = 0, sd: usize = 0, X: usize = 0, n: i32 = 0): Status {
  if (N < 1) return Status.BadDimensions;
  if (order == 0) order = scratchI32(N);
  if (Z == 0) Z = scratchF64(N < 2 ? 4 : (N - 1) * 4);
  const mark = arenaMark(); // the tree's scratch (an N'² or N² block) is dead once the order is known
  const st = hrpTree(C != 0 ? C : S, N, variant, order, Z, gram, C != 0 ? 0 : sd, X, n);
  arenaRelease(mark);
  if (st != Status.Ok) return st;
  // Σ permuted once into the leaf order, each entry already divided by its column's variance, in the tree's
  // released block: Q[a][b] = Σ_ij / Σ_jj with i = order[a], j = order[b] (the quotient the cluster variance adds,
  // computed once instead of at every level of the bisection; only within the halves of the first split), and
  // dp[a] = Σ_ii. Every cluster of the bisection is then a contiguous diagonal block of Q read along rows, instead
  // of ≈ 2N² loads at permuted positions of Σ (the same quotients, added in the same order: the same bits).
  const Q = scratchF64(N * N);
  const dp = scratchF64(N);
  const rs = <usize>N << 3;
  for (let a: i32 = 0; a < N; a++) {
    const i = <usize>load<i32>(order + (<usize>a << 2));
    store<f64>(dp + (<usize>a << 3), load<f64>(S + i * rs + (i << 3)));
  }
  for (let a: i32 = 0; a < N; a++) {
    const Si = S + <usize>load<i32>(order + (<usize>a << 2)) * rs;
    const Qa = Q + <usize>a * rs;
    // only the two diagonal blocks of the first split are ever read (every cluster lies within one half)
    const h = N >> 1;
    let b: i32 = a < h ? 0 : h;
    const e: i32 = a < h ? h : N;
    for (; b + 1 < e; b += 2) { // two IEEE quotients per f64x2 division
      const x = f64x2.replace_lane(f64x2.splat(load<f64>(Si + (<usize>load<i32>(order + (<usize>b << 2)) << 3))), 1,
        load<f64>(Si + (<usize>load<i32>(order + (<usize>(b + 1) << 2)) << 3)));
      v128.store(Qa + (<usize>b << 3), f64x2.div(x, v128.load(dp + (<usize>b << 3))));
    }
    if (b < e) {
      store<f64>(Qa + (<usize>b << 3), load<f64>(Si + (<usize>load<i32>(order + (<usize>b << 2)) << 3)) /
        load<f64>(dp + (<usize>b << 3)));
    }
  }
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), 1.0);
  const stLo = scratchI32(2 * N);
  const stLen = scratchI32(2 * N);
  let sp: i32 = 0;
  store<i32>(stLo, 0);
  store<i32>(stLen, N);
  sp = 1;
  while (sp > 0) {
    sp--;
    const lo = load<i32>(stLo + (<usize>sp << 2));
    const len = load<i32>(stLen + (<usize>sp << 2));
    if (len < 2) continue;
    const h = len >> 1;
    const vL = clusterVariance(Q, dp, N, lo, h);
    const vR = clusterVariance(Q, dp, N, lo + h, len - h);
    const tot = vL + vR;
    const alpha = tot > 0.0 ? 1.0 - vL / tot : 0.5;
    for (let a: i32 = lo; a < lo + h; a++) {
      const p = out + (<usize>load<i32>(order + (<usize>a << 2)) << 3);
      store<f64>(p, load<f64>(p) * alpha);
    }
    for (let a: i32 = lo + h; a < lo + len; a++) {
      const p = out + (<usize>load<i32>(order + (<usize>a << 2)) << 3);
      store<f64>(p, load<f64>(p) * (1.0 - alpha));
    }
    store<i32>(stLo + (<usize>sp << 2), lo + h);
    store<i32>(stLen + (<usize>sp << 2), len - h);
    store<i32>(stLo + (<usize>(sp + 1) << 2), lo);
    store<i32>(stLen + (<usize>(sp + 1) << 2), h);
    sp += 2;
  }
  return Status.Ok;
}

/**
 * V = ṽᵀ Σ_sub ṽ, ṽ_a = (1/Σ_aa)/Σ_b(1/Σ_bb) over the positions lo … lo+len−1 of the leaf order, from Q (N×N,
 * Q[a][b] = Σ_ab/Σ_bb in that order; dp the diagonal Σ_aa): sums in increasing position, s_a = Σ_b Q[a][b],
 * V = Σ_a (ṽ_a·s_a)/Σ(1/Σ). Four rows' sums run side by side (independent chains, each in its own order), and
 * are added to V in row order. O(len²), no allocation.
 */
function clusterVariance(Q: usize, dp: usize, N: i32, lo: i32, len: i32): f64 {
  let sinv = 0.0;
  for (let a: i32 = lo; a < lo + len; a++) sinv += 1.0 / load<f64>(dp + (<usize>a << 3));
  const rq = <usize>N << 3;
  const b0 = <usize>lo << 3;
  const b1 = <usize>(lo + len) << 3;
  let v = 0.0;
  let a: i32 = lo;
  for (; a + 3 < lo + len; a += 4) {
    const q0 = Q + <usize>a * rq, q1 = q0 + rq, q2 = q1 + rq, q3 = q2 + rq;
    let s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (let b = b0; b < b1; b += 8) {
      s0 += load<f64>(q0 + b);
      s1 += load<f64>(q1 + b);
      s2 += load<f64>(q2 + b);
      s3 += load<f64>(q3 + b);
    }
    v += 1.0 / load<f64>(dp + (<usize>a << 3)) / sinv * s0 / sinv;
    v += 1.0 / load<f64>(dp + (<usize>(a + 1) << 3)) / sinv * s1 / sinv;
    v += 1.0 / load<f64>(dp + (<usize>(a + 2) << 3)) / sinv * s2 / sinv;
    v += 1.0 / load<f64>(dp + (<usize>(a + 3) << 3)) / sinv * s3 / sinv;
  }
  for (; a < lo + len; a++) {
    const qa = Q + <usize>a * rq;
    let s = 0.0;
    for (let b = b0; b < b1; b += 8) s += load<f64>(qa + b);
    v += 1.0 / load<f64>(dp + (<usize>a << 3)) / sinv * s / sinv;
  }
  return v;
}
