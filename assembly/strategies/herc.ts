import { Status } from "../shared/status";
import { arenaMark, arenaRelease, scratchF64, scratchI32 } from "../memory";
import { correlationClusters } from "../cluster/ward";

/**
 * l3herc: hierarchical equal risk contribution, Raffinot (2018) (docs/method.md §4.8).
 *
 * Method: (1) clusters: Ward linkage of D2 = (1 − ρ)/2 (the HRP distance squared), cut into k clusters, k from
 *   the elbow rule of `clusterCount` (cluster/ward.ts). (2) Within each cluster c, inverse-variance weights
 *   ṽ_i = (1/Σ_ii) / Σ_{j∈c} (1/Σ_jj), and the cluster's risk V_c = ṽᵀΣ_cc ṽ. (3) Top-down along the dendrogram,
 *   over the k − 1 merges above the cut only: a node's risk is the sum of the V_c of the clusters below it; a
 *   node's weight is split between its children a, b as α_a = 1 − R_a/(R_a + R_b), α_b = 1 − α_a (½ each if
 *   R_a + R_b = 0), starting from 1 at the root. (4) w_i = (weight of i's cluster)·ṽ_i.
 *   Sums run in increasing asset index within a cluster: s = Σ_j 1/Σ_jj, ṽ_i = (1/Σ_ii)/s,
 *   V_c = Σ_i ṽ_i·(Σ_j Σ_ij·ṽ_j); node risks are added bottom-up in merge order.
 * Preconditions: S symmetric, finite, Σ_ii > 0 (checked by the caller); sd = √Σ_ii. No matrix is inverted:
 *   a singular Σ is fine. Permutation-equivariant when no two linkage distances tie (the tree and the cut are then
 *   label-free).
 * Convergence: not iterative. Edge cases: N = 1 → [1]; N ≤ 3 → k = 1; k = 1 → inverse variance (w ∝ 1/Σ_ii,
 *   HRP's diagonal rule, not ivp's 1/σ); k = N → the tree's top-down inverse-variance splits down to every asset.
 * Layout: S N×N row-major, sd N f64, out N weights; k: the number of clusters (0 = the elbow rule).
 * Complexity: O(N²) (linkage) + O(Σ_c n_c²) (cluster risks); scratch one N×N block (the linkage's, released
 *   before the allocation step) + O(N).
 * References: Raffinot (2018), "The Hierarchical Equal Risk Contribution Portfolio", SSRN 3237540; Raffinot
 *   (2017), "Hierarchical clustering-based asset allocation", JPM 44(2):89–99, doi:10.3905/jpm.2018.44.2.089;
 *   Ward (1963), doi:10.1080/01621459.1963.10500845.
 * Departures: the number of clusters is chosen by a deterministic two-difference rule on Ward's dispersion
 *   (no random reference draws of Tibshirani's gap statistic); the risk measure is the variance.
 */
export function hercWeights(S: usize, sd: usize, N: i32, out: usize): Status {
  return hercWeightsK(S, sd, N, 0, out);
}

/** `hercWeights` with the number of clusters given (k ≥ 1, capped at N) or 0 for the elbow rule. */
export function hercWeightsK(S: usize, sd: usize, N: i32, k: i32, out: usize): Status {
  if (N < 1 || k < 0) return Status.BadDimensions;
  if (N == 1) {
    store<f64>(out, 1.0);
    return Status.Ok;
  }
  const labels = scratchI32(N);
  const Z = scratchF64((N - 1) * 4);
  const rootLabel = scratchI32(2 * N);
  const mark = arenaMark();
  k = correlationClusters(S, sd, N, k, labels, Z, rootLabel);
  arenaRelease(mark);
  // members sorted by cluster (counting sort, increasing asset index within a cluster)
  const start = scratchI32(k + 1);
  const members = scratchI32(N);
  clusterMembers(labels, N, k, start, members);
  const V = scratchF64(k);
  const r = <usize>N << 3;
  for (let c: i32 = 0; c < k; c++) {
    const b = load<i32>(start + (<usize>c << 2));
    const e = load<i32>(start + (<usize>(c + 1) << 2));
    let s = 0.0;
    for (let p = b; p < e; p++) {
      const i = load<i32>(members + (<usize>p << 2));
      s += 1.0 / load<f64>(S + <usize>i * r + (<usize>i << 3));
    }
    for (let p = b; p < e; p++) {
      const i = load<i32>(members + (<usize>p << 2));
      store<f64>(out + (<usize>i << 3), 1.0 / load<f64>(S + <usize>i * r + (<usize>i << 3)) / s);
    }
    let v = 0.0;
    for (let p = b; p < e; p++) {
      const i = load<i32>(members + (<usize>p << 2));
      const Si = S + <usize>i * r;
      let t = 0.0;
      for (let q = b; q < e; q++) {
        const j = load<i32>(members + (<usize>q << 2));
        t += load<f64>(Si + (<usize>j << 3)) * load<f64>(out + (<usize>j << 3));
      }
      v += load<f64>(out + (<usize>i << 3)) * t;
    }
    store<f64>(V + (<usize>c << 3), v);
  }
  // the k − 1 merges above the cut: rows N − k … N − 2 of Z (node ids 2N − k … 2N − 2)
  const cw = scratchF64(k);
  if (k == 1) {
    store<f64>(cw, 1.0);
  } else {
    const first = N - k;
    const R = scratchF64(k - 1);
    const W = scratchF64(k - 1);
    for (let m = first; m < N - 1; m++) {
      const row = Z + (<usize>m << 5);
      const ra = nodeRisk(<i32>load<f64>(row), N, first, rootLabel, V, R);
      const rb = nodeRisk(<i32>load<f64>(row + 8), N, first, rootLabel, V, R);
      store<f64>(R + (<usize>(m - first) << 3), ra + rb);
    }
    store<f64>(W + (<usize>(k - 2) << 3), 1.0);
    for (let m = N - 2; m >= first; m--) {
      const row = Z + (<usize>m << 5);
      const a = <i32>load<f64>(row);
      const b = <i32>load<f64>(row + 8);
      const ra = nodeRisk(a, N, first, rootLabel, V, R);
      const rb = nodeRisk(b, N, first, rootLabel, V, R);
      const tot = ra + rb;
      const alpha = tot > 0.0 ? 1.0 - ra / tot : 0.5;
      const w = load<f64>(W + (<usize>(m - first) << 3));
      setNodeWeight(a, w * alpha, N, first, rootLabel, cw, W);
      setNodeWeight(b, w * (1.0 - alpha), N, first, rootLabel, cw, W);
    }
  }
  for (let i: i32 = 0; i < N; i++) {
    const p = out + (<usize>i << 3);
    store<f64>(p, load<f64>(cw + (<usize>load<i32>(labels + (<usize>i << 2)) << 3)) * load<f64>(p));
  }
  return Status.Ok;
}

/** Risk of a tree node at or above the cut: a cluster's V (its root's label), else the merge's summed R. */
// @ts-ignore: decorator
@inline function nodeRisk(id: i32, N: i32, first: i32, rootLabel: usize, V: usize, R: usize): f64 {
  return id < N + first
    ? load<f64>(V + (<usize>load<i32>(rootLabel + (<usize>id << 2)) << 3))
    : load<f64>(R + (<usize>(id - N - first) << 3));
}

// @ts-ignore: decorator
@inline function setNodeWeight(id: i32, w: f64, N: i32, first: i32, rootLabel: usize, cw: usize, W: usize): void {
  if (id < N + first) store<f64>(cw + (<usize>load<i32>(rootLabel + (<usize>id << 2)) << 3), w);
  else store<f64>(W + (<usize>(id - N - first) << 3), w);
}

/**
 * Counting sort of the assets by cluster label: members[start[c] … start[c+1]) are cluster c's assets in
 * increasing index. labels i32[N] in 0 … k−1; start i32[k+1]; members i32[N]. O(N + k), no allocation.
 */
export function clusterMembers(labels: usize, N: i32, k: i32, start: usize, members: usize): void {
  for (let c: i32 = 0; c <= k; c++) store<i32>(start + (<usize>c << 2), 0);
  for (let i: i32 = 0; i < N; i++) {
    const p = start + (<usize>(load<i32>(labels + (<usize>i << 2)) + 1) << 2);
    store<i32>(p, load<i32>(p) + 1);
  }
  for (let c: i32 = 0; c < k; c++) {
    const p = start + (<usize>(c + 1) << 2);
    store<i32>(p, load<i32>(p) + load<i32>(p - 4));
  }
  // fill using start[c] as a cursor, then shift the cursors back
  for (let i: i32 = 0; i < N; i++) {
    const p = start + (<usize>load<i32>(labels + (<usize>i << 2)) << 2);
    const at = load<i32>(p);
    store<i32>(members + (<usize>at << 2), i);
    store<i32>(p, at + 1);
  }
  for (let c: i32 = k; c > 0; c--) store<i32>(start + (<usize>c << 2), load<i32>(start + (<usize>(c - 1) << 2)));
  store<i32>(start, 0);
}
