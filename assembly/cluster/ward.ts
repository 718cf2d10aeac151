import { scratchF64, scratchI32 } from "../memory";

/**
 * Squared HRP distances of the correlation derived from a covariance (docs/method.md §4.8 step 1):
 * D2_ij = clip((1 − ρ_ij)/2, 0, 1), D2_ii = 0, with ρ_ij = Σ_ij / (σ_i·σ_j) formed as stats/covariance.ts
 * `correlation` forms C_ij (so the same bits as C, and D2 = d² before the square root of cluster/linkage.ts
 * `correlationDistance`).
 * Layout: S N×N row-major (only the strict upper triangle is read); sd N f64 (σ_i = √Σ_ii); D2 N×N row-major,
 *   written in full and exactly symmetric. Complexity: N²/2 divisions, no allocation.
 */
export function squaredCorrelationDistance(S: usize, sd: usize, N: i32, D2: usize): void {
  const r = <usize>N << 3;
  for (let i: i32 = 0; i < N; i++) {
    store<f64>(D2 + <usize>i * r + (<usize>i << 3), 0.0);
    const si = load<f64>(sd + (<usize>i << 3));
    const Si = S + <usize>i * r;
    const Di = D2 + <usize>i * r;
    for (let j: i32 = i + 1; j < N; j++) {
      const c = load<f64>(Si + (<usize>j << 3)) / (si * load<f64>(sd + (<usize>j << 3)));
      let v = (1.0 - c) * 0.5;
      if (v < 0.0) v = 0.0;
      if (v > 1.0) v = 1.0;
      store<f64>(Di + (<usize>j << 3), v);
      store<f64>(D2 + <usize>j * r + (<usize>i << 3), v);
    }
  }
}

/**
 * Ward linkage (minimum increase of the within-cluster sum of squares) by the nearest-neighbour chain, with
 * deterministic tie-breaks (docs/method.md §4.8 step 2).
 *
 * Method: Müllner's NN-chain on squared distances. A chain starts at the lowest-index active slot; its top x looks
 *   for its nearest active neighbour y, starting from the element below x on the chain (if any) and replacing it
 *   only by a strictly smaller D2 while scanning slots in index order (so the chain's predecessor wins ties, then
 *   the lowest index). When y is that predecessor, x and y are reciprocal nearest neighbours: they merge into the
 *   larger slot index (the smaller is retired) at squared height D2_xy, and the Lance–Williams update for Ward
 *   writes, for every other active slot i (sizes n_i, n_x, n_y, t = n_i + n_x + n_y),
 *     D2_{i,xy} = ((n_i + n_x)·D2_ix + (n_i + n_y)·D2_iy − n_i·D2_xy) / t
 *   (evaluated in that order). The rest of the chain is kept (reducibility). The N−1 merges are then stably sorted
 *   by squared height (merge sort) and relabelled with union–find as scipy's `label` does: the k-th merge creates
 *   id N + k, and its row is [min(id_a, id_b), max(id_a, id_b), height, size], height = √max(D2, 0).
 *   On inputs that are squared Euclidean distances (D2 = (1 − ρ)/2 is: ρ a correlation matrix), the k-th height h
 *   satisfies h²/2 = the increase of W = Σ_clusters Σ_{i<j in cluster} D2_ij / n_cluster at that merge.
 * Layout: D2 N×N row-major (symmetric, finite, zero diagonal), OVERWRITTEN (it is the working matrix); Z (N−1)×4
 *   f64 rows [a, b, height, size] (scipy format).
 * Preconditions: N ≥ 2. Convergence: not iterative (N−1 merges; a chain only grows through strictly smaller
 *   distances, so it ends). Complexity: O(N²) time (each nearest-neighbour scan O(N), at most ~3N of them; each
 *   update O(N)); scratch 3N i32 + N f64 + the sort's 2N i32, no N² beyond D2.
 * Edge cases: equal distances are resolved by the rule above (the same bits on every host); zero distances
 *   (ρ = 1) merge first, at height 0.
 * References: Ward (1963), JASA 58(301):236–244, doi:10.1080/01621459.1963.10500845; Müllner (2011), "Modern
 *   hierarchical, agglomerative clustering algorithms", arXiv:1109.2378 (NN-chain, Lance–Williams for Ward);
 *   scipy.cluster.hierarchy (`linkage(method="ward")`, `label`).
 * Departures: scipy keeps d and takes square roots in every update; here D2 is kept (one rounding less per
 *   update): heights can differ from scipy's in the last bits, and exact ties are judged on D2.
 */
export function wardLinkage(D2: usize, N: i32, Z: usize): void {
  const size = scratchI32(N);
  const chain = scratchI32(N);
  const mx = scratchI32(N);
  const my = scratchI32(N);
  const mh = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) store<i32>(size + (<usize>i << 2), 1);
  const r = <usize>N << 3;
  let len: i32 = 0;
  let lowest: i32 = 0;
  for (let k: i32 = 0; k < N - 1; k++) {
    if (len == 0) {
      while (load<i32>(size + (<usize>lowest << 2)) == 0) lowest++;
      store<i32>(chain, lowest);
      len = 1;
    }
    let x: i32 = 0;
    let y: i32 = -1;
    let cur = Infinity;
    while (true) {
      x = load<i32>(chain + (<usize>(len - 1) << 2));
      const Dx = D2 + <usize>x * r;
      if (len >= 2) {
        y = load<i32>(chain + (<usize>(len - 2) << 2));
        cur = load<f64>(Dx + (<usize>y << 3));
      } else {
        y = -1;
        cur = Infinity;
      }
      for (let i: i32 = 0; i < N; i++) {
        if (i == x || load<i32>(size + (<usize>i << 2)) == 0) continue;
        const d = load<f64>(Dx + (<usize>i << 3));
        if (d < cur || y < 0) {
          cur = d;
          y = i;
        }
      }
      if (len >= 2 && y == load<i32>(chain + (<usize>(len - 2) << 2))) break;
      store<i32>(chain + (<usize>len << 2), y);
      len++;
    }
    len -= 2;
    if (x > y) {
      const t = x;
      x = y;
      y = t;
    }
    const nx = load<i32>(size + (<usize>x << 2));
    const ny = load<i32>(size + (<usize>y << 2));
    store<i32>(mx + (<usize>k << 2), x);
    store<i32>(my + (<usize>k << 2), y);
    store<f64>(mh + (<usize>k << 3), cur);
    store<i32>(size + (<usize>x << 2), 0);
    store<i32>(size + (<usize>y << 2), nx + ny);
    const Dx = D2 + <usize>x * r;
    const Dy = D2 + <usize>y * r;
    for (let i: i32 = 0; i < N; i++) {
      const ni = load<i32>(size + (<usize>i << 2));
      if (ni == 0 || i == y) continue;
      const v = (<f64>(ni + nx) * load<f64>(Dx + (<usize>i << 3)) + <f64>(ni + ny) * load<f64>(Dy + (<usize>i << 3)) -
        <f64>ni * cur) / <f64>(ni + nx + ny);
      store<f64>(Dy + (<usize>i << 3), v);
      store<f64>(D2 + <usize>i * r + (<usize>y << 3), v);
    }
  }
  // stable sort of the merges by squared height, then scipy's union–find labelling
  const idx = scratchI32(N);
  const tmp = scratchI32(N);
  stableSortByKey(mh, N - 1, idx, tmp);
  const parent = scratchI32(2 * N);
  for (let i: i32 = 0; i < 2 * N - 1; i++) store<i32>(parent + (<usize>i << 2), i);
  const csize = scratchI32(2 * N);
  for (let i: i32 = 0; i < N; i++) store<i32>(csize + (<usize>i << 2), 1);
  for (let k: i32 = 0; k < N - 1; k++) {
    const m = load<i32>(idx + (<usize>k << 2));
    const a = findRoot(parent, load<i32>(mx + (<usize>m << 2)));
    const b = findRoot(parent, load<i32>(my + (<usize>m << 2)));
    const id = N + k;
    store<i32>(parent + (<usize>a << 2), id);
    store<i32>(parent + (<usize>b << 2), id);
    const sz = load<i32>(csize + (<usize>a << 2)) + load<i32>(csize + (<usize>b << 2));
    store<i32>(csize + (<usize>id << 2), sz);
    const row = Z + (<usize>k << 5);
    const h = load<f64>(mh + (<usize>m << 3));
    store<f64>(row, <f64>min(a, b));
    store<f64>(row + 8, <f64>max(a, b));
    store<f64>(row + 16, Math.sqrt(h > 0.0 ? h : 0.0));
    store<f64>(row + 24, <f64>sz);
  }
}

/** Union–find root with path halving (parent i32[2N−1]). */
function findRoot(parent: usize, x: i32): i32 {
  while (true) {
    const p = load<i32>(parent + (<usize>x << 2));
    if (p == x) return x;
    const g = load<i32>(parent + (<usize>p << 2));
    store<i32>(parent + (<usize>x << 2), g);
    x = g;
  }
}

/**
 * idx[0..n) = 0..n−1 stably sorted by key[idx] ascending (bottom-up merge sort; equal keys keep index order).
 * tmp: n i32 of scratch. O(n log n).
 */
function stableSortByKey(key: usize, n: i32, idx: usize, tmp: usize): void {
  for (let i: i32 = 0; i < n; i++) store<i32>(idx + (<usize>i << 2), i);
  let src = idx;
  let dst = tmp;
  for (let w: i32 = 1; w < n; w <<= 1) {
    for (let lo: i32 = 0; lo < n; lo += 2 * w) {
      const mid = min(lo + w, n);
      const hi = min(lo + 2 * w, n);
      let a = lo;
      let b = mid;
      let o = lo;
      while (a < mid && b < hi) {
        const ia = load<i32>(src + (<usize>a << 2));
        const ib = load<i32>(src + (<usize>b << 2));
        if (load<f64>(key + (<usize>ib << 3)) < load<f64>(key + (<usize>ia << 3))) {
          store<i32>(dst + (<usize>o << 2), ib);
          b++;
        } else {
          store<i32>(dst + (<usize>o << 2), ia);
          a++;
        }
        o++;
      }
      while (a < mid) { store<i32>(dst + (<usize>o << 2), load<i32>(src + (<usize>a << 2))); a++; o++; }
      while (b < hi) { store<i32>(dst + (<usize>o << 2), load<i32>(src + (<usize>b << 2))); b++; o++; }
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memory.copy(idx, src, <usize>n << 2);
}

/**
 * The number of clusters (docs/method.md §4.8 step 3): the elbow of Ward's within-cluster dispersion, a
 * deterministic two-difference gap rule. With H_j the height of the merge that leaves j clusters (row N − 1 − j of
 * Z) and W_k = ½ Σ_{j ≥ k} H_j² the dispersion at k clusters, the two-difference
 *   W_{k−1} − 2W_k + W_{k+1} = ½ (H_{k−1}² − H_k²)
 * is largest at the chosen k: k* = argmax_{2 ≤ k ≤ K} (H_{k−1}² − H_k²), K = ⌊√N⌋, the smallest k on ties.
 * N ≤ 3 (K < 2): k* = 1. Layout: Z (N−1)×4 as `wardLinkage` writes it. O(√N), no allocation.
 */
export function clusterCount(Z: usize, N: i32): i32 {
  let K: i32 = 1;
  while ((K + 1) * (K + 1) <= N) K++;
  if (K < 2) return 1;
  let best: i32 = 2;
  let bestGap = -Infinity;
  for (let k: i32 = 2; k <= K; k++) {
    const hp = load<f64>(Z + (<usize>(N - k) << 5) + 16); // H_{k−1}: row N − k
    const hk = load<f64>(Z + (<usize>(N - 1 - k) << 5) + 16); // H_k: row N − 1 − k
    const g = hp * hp - hk * hk;
    if (g > bestGap) {
      bestGap = g;
      best = k;
    }
  }
  return best;
}

/**
 * Cut a linkage into k clusters (scipy `fcluster(Z, k, "maxclust")` on a monotone tree): the clusters are the
 * connected components of the first N − k rows of Z. Labels 0 … k−1 are numbered in order of each cluster's
 * smallest asset index (asset 0 is in cluster 0).
 * Layout: Z (N−1)×4; labels i32[N] (out); rootLabel i32[2N−1] (out, or 0 for none): the label of each tree node
 *   that is a cluster's root, −1 for the others (the last k − 1 merges and the nodes inside a cluster).
 * Preconditions: 1 ≤ k ≤ N. Complexity: O(N); scratch 2N i32.
 */
export function cutTree(Z: usize, N: i32, k: i32, labels: usize, rootLabel: usize = 0): void {
  const root = scratchI32(2 * N);
  if (rootLabel == 0) rootLabel = scratchI32(2 * N);
  for (let i: i32 = 0; i < 2 * N - 1; i++) {
    store<i32>(root + (<usize>i << 2), i);
    store<i32>(rootLabel + (<usize>i << 2), -1);
  }
  for (let m: i32 = N - k - 1; m >= 0; m--) {
    const row = Z + (<usize>m << 5);
    const rt = load<i32>(root + (<usize>(N + m) << 2));
    store<i32>(root + (<usize><i32>load<f64>(row) << 2), rt);
    store<i32>(root + (<usize><i32>load<f64>(row + 8) << 2), rt);
  }
  let next: i32 = 0;
  for (let i: i32 = 0; i < N; i++) {
    const rt = load<i32>(root + (<usize>i << 2));
    let l = load<i32>(rootLabel + (<usize>rt << 2));
    if (l < 0) {
      l = next++;
      store<i32>(rootLabel + (<usize>rt << 2), l);
    }
    store<i32>(labels + (<usize>i << 2), l);
  }
}

/**
 * Clusters of the correlation behind a covariance: Ward linkage of D2 = (1 − ρ)/2, cut into k clusters (k ≥ 1
 * given, or 0: `clusterCount`'s choice, capped at N). Returns the number of clusters; labels as in `cutTree`.
 * Layout: S N×N, sd N (σ); labels i32[N]; Z (N−1)×4 (N ≥ 2); rootLabel i32[2N−1] or 0.
 * Complexity: O(N²); scratch one N×N block (D2) + O(N), all of it released by the caller's arena mark.
 */
export function correlationClusters(S: usize, sd: usize, N: i32, k: i32, labels: usize, Z: usize,
  rootLabel: usize = 0): i32 {
  if (N == 1) {
    store<i32>(labels, 0);
    if (rootLabel != 0) store<i32>(rootLabel, 0);
    return 1;
  }
  const D2 = scratchF64(N * N);
  squaredCorrelationDistance(S, sd, N, D2);
  wardLinkage(D2, N, Z);
  if (k <= 0) k = clusterCount(Z, N);
  if (k > N) k = N;
  cutTree(Z, N, k, labels, rootLabel);
  return k;
}
