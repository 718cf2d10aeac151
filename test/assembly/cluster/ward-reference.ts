/**
 * Plain-JS references for herc and nco (docs/method.md §4.8, §4.9), written from the definitions, independent of
 * the kernels: Ward's method as the textbook greedy agglomeration on the within-cluster dispersion
 * W(C) = Σ_{i<j∈C} D2_ij / |C| (no Lance–Williams, no nearest-neighbour chain): at each step the pair of clusters
 * whose union raises ΣW least is merged, at height h = √(2·ΔW). Then the cut, the elbow rule, herc's top-down
 * split and nco's two stages. Ties are not handled specially: the tests that compare with it use inputs without
 * tied distances. O(N³); for the tests only.
 */
import { readFileSync } from "node:fs";
import { sampleCov, solveDense } from "../../helpers/kernels.js";
import { sharedDataPath } from "../../helpers/shared-data.js";

export interface RefTree {
  /** Merges in the order made (= increasing height: Ward is monotone): scipy rows [a, b, height, size]. */
  Z: number[][];
  /** Members of each node id (0 … N−1 leaves, N + m the m-th merge). */
  members: number[][];
}

/** D2_ij = clip((1 − ρ_ij)/2, 0, 1) of a covariance, ρ_ij = S_ij/(σ_iσ_j). */
export function squaredDistances(S: ArrayLike<number>, N: number): number[][] {
  const sd = Array.from({ length: N }, (_, i) => Math.sqrt(S[i * N + i]));
  return Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => {
    if (i === j) return 0;
    const v = (1 - S[i * N + j] / (sd[i] * sd[j])) / 2;
    return Math.min(1, Math.max(0, v));
  }));
}

/** Ward's method, greedy on the dispersion (see the module doc). */
export function wardTree(D2: number[][]): RefTree {
  const N = D2.length;
  const members: number[][] = Array.from({ length: N }, (_, i) => [i]);
  const within: number[] = new Array(N).fill(0); // Σ_{i<j∈C} D2_ij
  const active: number[] = Array.from({ length: N }, (_, i) => i);
  const Z: number[][] = [];
  const cross = (a: number, b: number) => {
    let s = 0;
    for (const i of members[a]) for (const j of members[b]) s += D2[i][j];
    return s;
  };
  const W = (id: number) => within[id] / members[id].length;
  for (let m = 0; m < N - 1; m++) {
    let best = Infinity;
    let ba = -1;
    let bb = -1;
    let bx = 0;
    for (let p = 0; p < active.length; p++) {
      for (let q = p + 1; q < active.length; q++) {
        const a = active[p];
        const b = active[q];
        const x = cross(a, b);
        const n = members[a].length + members[b].length;
        const dW = (within[a] + within[b] + x) / n - W(a) - W(b);
        if (dW < best) {
          best = dW;
          ba = a;
          bb = b;
          bx = x;
        }
      }
    }
    const id = N + m;
    members[id] = [...members[ba], ...members[bb]].sort((u, v) => u - v);
    within[id] = within[ba] + within[bb] + bx;
    Z.push([Math.min(ba, bb), Math.max(ba, bb), Math.sqrt(Math.max(0, 2 * best)), members[id].length]);
    active.splice(active.indexOf(ba), 1);
    active.splice(active.indexOf(bb), 1);
    active.push(id);
  }
  return { Z, members };
}

/** The elbow rule: k* = argmax_{2≤k≤⌊√N⌋} (H_{k−1}² − H_k²), H_j the height leaving j clusters; 1 if N ≤ 3. */
export function elbowCount(Z: number[][], N: number): number {
  const K = Math.floor(Math.sqrt(N));
  if (K < 2) return 1;
  let best = 2;
  let gap = -Infinity;
  for (let k = 2; k <= K; k++) {
    const g = Z[N - k][2] ** 2 - Z[N - 1 - k][2] ** 2;
    if (g > gap) {
      gap = g;
      best = k;
    }
  }
  return best;
}

/** Clusters after the first N − k merges: node ids of their roots, and labels numbered by smallest asset index. */
export function cut(tree: RefTree, N: number, k: number): { labels: number[]; roots: number[] } {
  const rootOf = Array.from({ length: N }, (_, i) => i);
  for (let m = 0; m < N - k; m++) for (const i of tree.members[N + m]) rootOf[i] = N + m;
  const roots: number[] = [];
  const labels = rootOf.map((r) => {
    let l = roots.indexOf(r);
    if (l < 0) {
      roots.push(r);
      l = roots.length - 1;
    }
    return l;
  });
  return { labels, roots };
}

/** Inverse-variance weights of a set of assets and the variance of that portfolio. */
function inverseVariance(S: ArrayLike<number>, N: number, set: number[]): { w: number[]; v: number } {
  const inv = set.map((i) => 1 / S[i * N + i]);
  const s = inv.reduce((a, b) => a + b, 0);
  const w = inv.map((x) => x / s);
  let v = 0;
  set.forEach((i, a) => set.forEach((j, b) => { v += w[a] * S[i * N + j] * w[b]; }));
  return { w, v };
}

/** herc (docs/method.md §4.8), from the definitions; `k` = 0: the elbow rule. */
export function hercReference(S: ArrayLike<number>, N: number, k = 0): { weights: number[]; labels: number[]; k: number } {
  if (N === 1) return { weights: [1], labels: [0], k: 1 };
  const tree = wardTree(squaredDistances(S, N));
  const kk = Math.min(N, k > 0 ? k : elbowCount(tree.Z, N));
  const { labels, roots } = cut(tree, N, kk);
  const clusters = roots.map((r) => tree.members[r]);
  const parts = clusters.map((c) => inverseVariance(S, N, c));
  // the risk of a node above the cut: the sum of its clusters' variances
  const risk = (id: number): number => {
    const l = roots.indexOf(id);
    if (l >= 0) return parts[l].v;
    const row = tree.Z[id - N];
    return risk(row[0]) + risk(row[1]);
  };
  const cw = new Array<number>(kk).fill(0);
  const descend = (id: number, w: number) => {
    const l = roots.indexOf(id);
    if (l >= 0) {
      cw[l] = w;
      return;
    }
    const [a, b] = tree.Z[id - N];
    const ra = risk(a);
    const rb = risk(b);
    const alpha = ra + rb > 0 ? 1 - ra / (ra + rb) : 0.5;
    descend(a, w * alpha);
    descend(b, w * (1 - alpha));
  };
  descend(2 * N - 2, 1);
  const weights = new Array<number>(N).fill(0);
  clusters.forEach((c, l) => c.forEach((i, a) => { weights[i] = cw[l] * parts[l].w[a]; }));
  return { weights, labels, k: kk };
}

/**
 * Long-only minimum variance by enumerating supports (for Q ≻ 0 of small order, n ≤ 12): on each support F,
 * w_F ∝ Q_FF⁻¹1; the point that is feasible and satisfies the KKT conditions ((Qw)_i ≥ λ off F) with the lowest
 * variance is returned.
 */
export function bruteForceMinVariance(Q: number[][]): number[] {
  const n = Q.length;
  let best: number[] | undefined;
  let bestV = Infinity;
  for (let mask = 1; mask < 1 << n; mask++) {
    const F = Array.from({ length: n }, (_, i) => i).filter((i) => (mask >> i) & 1);
    const z = solveDense(F.map((i) => F.map((j) => Q[i][j])), F.map(() => 1));
    if (!z) continue;
    const s = z.reduce((a, b) => a + b, 0);
    if (!(s > 0) || z.some((x) => x / s < -1e-14)) continue;
    const w = new Array<number>(n).fill(0);
    F.forEach((i, a) => { w[i] = Math.max(0, z[a] / s); });
    const g = Q.map((r) => r.reduce((acc, q, j) => acc + q * w[j], 0));
    const lambda = w.reduce((acc, x, i) => acc + x * g[i], 0);
    if (g.some((gi, i) => w[i] === 0 && gi < lambda * (1 - 1e-12))) continue;
    if (lambda < bestV) {
      bestV = lambda;
      best = w;
    }
  }
  if (!best) throw new Error("no KKT point found");
  return best;
}

/** nco (docs/method.md §4.9) with brute-force QPs (clusters and k of at most 12), `k` = 0: the elbow rule. */
export function ncoReference(S: ArrayLike<number>, N: number, k = 0): { weights: number[]; labels: number[]; k: number } {
  if (N === 1) return { weights: [1], labels: [0], k: 1 };
  const tree = wardTree(squaredDistances(S, N));
  const kk = Math.min(N, k > 0 ? k : elbowCount(tree.Z, N));
  const { labels, roots } = cut(tree, N, kk);
  const clusters = roots.map((r) => tree.members[r]);
  const u = new Array<number>(N).fill(0);
  for (const c of clusters) {
    const wc = bruteForceMinVariance(c.map((i) => c.map((j) => S[i * N + j])));
    c.forEach((i, a) => { u[i] = wc[a]; });
  }
  const R = clusters.map((a) => clusters.map((b) => {
    let s = 0;
    for (const i of a) for (const j of b) s += u[i] * S[i * N + j] * u[j];
    return s;
  }));
  const y = bruteForceMinVariance(R);
  return { weights: u.map((x, i) => x * y[labels[i]]), labels, k: kk };
}

/** Daily log-returns of the first `rows` closes of the first N tickers of cvxportfolio's S&P 500 prices. */
export function realCov(N: number, rows = 253): Float64Array {
  const lines = readFileSync(sharedDataPath("cvxportfolio-sp500", "prices.csv"), "utf8").split("\n")
    .filter((l) => l.length > 0);
  const closes = lines.slice(1, rows + 1).map((l) => l.split(",").slice(1, N + 1).map(Number));
  const n = closes.length - 1;
  const X = new Float64Array(n * N);
  for (let t = 0; t < n; t++) for (let i = 0; i < N; i++) X[t * N + i] = Math.log(closes[t + 1][i] / closes[t][i]);
  return sampleCov(X, n, N);
}
