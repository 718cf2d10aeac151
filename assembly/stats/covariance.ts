import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { checkFinite } from "../checks";
import { scratchF64 } from "../memory";
import { gram } from "../linalg/gram";

/**
 * Sample covariance of the columns of X (docs/method.md §3.3, §6.3): mean-centred, ddof = 1, explicitly symmetric.
 *
 * Method: two passes. (1) column means; (2) the centred data is transposed into an asset-major scratch block
 * Xc (N' × n', rows padded with zeros to even length and N' even), then Σ_jk = ⟨Xc_j, Xc_k⟩ / (n − 1) for k ≥ j,
 * computed by the shared 2×2-blocked f64x2 `gram` kernel, then scaled.
 * Layout: `X` is n×N row-major (observations × assets); `out` is N×N row-major; `means` (optional, 0 = none)
 * receives the N column means.
 * Preconditions: n ≥ 2, N ≥ 1, X finite (else `NonFinite`, `lastBadIndex()` = flat index).
 * Complexity: ≈ N²·n flops; scratch N'·n' f64 (heap, released by the host's next reset).
 * Determinism: fixed lane split and summation order.
 */
export function covariance(X: usize, n: i32, N: i32, out: usize, means: usize): Status {
  if (n < 2 || N < 1) return Status.BadDimensions;
  if (!checkFinite(X, n * N)) return Status.NonFinite;
  setBadIndex(-1);
  const np = (n + 1) & ~1;
  const Np = (N + 1) & ~1;
  const Xc = scratchF64(Np * np);
  memory.fill(Xc, 0, <usize>(Np * np) << 3);
  const mu = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) store<f64>(mu + (<usize>i << 3), 0.0);
  for (let t: i32 = 0; t < n; t++) {
    const row = X + (<usize>(t * N) << 3);
    for (let i: i32 = 0; i < N; i++) {
      const a = mu + (<usize>i << 3);
      store<f64>(a, load<f64>(a) + load<f64>(row + (<usize>i << 3)));
    }
  }
  const invn = 1.0 / <f64>n;
  for (let i: i32 = 0; i < N; i++) {
    const a = mu + (<usize>i << 3);
    store<f64>(a, load<f64>(a) * invn);
  }
  for (let t: i32 = 0; t < n; t++) {
    const row = X + (<usize>(t * N) << 3);
    for (let i: i32 = 0; i < N; i++) {
      store<f64>(Xc + (<usize>(i * np + t) << 3), load<f64>(row + (<usize>i << 3)) - load<f64>(mu + (<usize>i << 3)));
    }
  }
  if (means != 0) memory.copy(means, mu, <usize>N << 3);
  gram(Xc, Np, np, N, out);
  const scale = 1.0 / <f64>(n - 1);
  const NN = N * N;
  const vs = f64x2.splat(scale);
  let k: i32 = 0;
  for (; k + 1 < NN; k += 2) { // two entries per step: each lane the scalar's IEEE multiply (the same bits)
    const p = out + (<usize>k << 3);
    v128.store(p, f64x2.mul(v128.load(p), vs));
  }
  if (k < NN) {
    const p = out + (<usize>k << 3);
    store<f64>(p, load<f64>(p) * scale);
  }
  return Status.Ok;
}

/**
 * Correlation matrix and volatilities from a covariance matrix (docs/method.md §2, §3.3):
 * σ_i = √Σ_ii, C_jk = Σ_jk / (σ_j σ_k), C_jj := 1 exactly.
 * Layout: `S`, `C` N×N row-major (may alias); `sd` receives N volatilities (0 = not wanted).
 * Preconditions: Σ_ii > 0 and finite, else `ZeroVariance` with `lastBadIndex()` = the asset.
 * Complexity: N² divisions, scratch N f64.
 */
export function correlation(S: usize, N: i32, C: usize, sd: usize): Status {
  if (N < 1) return Status.BadDimensions;
  const s = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    const v = load<f64>(S + (<usize>(i * N + i) << 3));
    if (!(v > 0.0) || !isFinite(v)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
    store<f64>(s + (<usize>i << 3), Math.sqrt(v));
  }
  setBadIndex(-1);
  for (let j: i32 = 0; j < N; j++) {
    const sj = load<f64>(s + (<usize>j << 3));
    const vj = f64x2.splat(sj);
    const row = <usize>(j * N) << 3;
    // two columns per step in f64x2 lanes: each lane the scalar's IEEE multiply and divide (the same bits)
    let k: i32 = 0;
    for (; k + 1 < N; k += 2) {
      const off = row + (<usize>k << 3);
      v128.store(C + off, f64x2.div(v128.load(S + off), f64x2.mul(vj, v128.load(s + (<usize>k << 3)))));
    }
    if (k < N) {
      const off = row + (<usize>k << 3);
      store<f64>(C + off, load<f64>(S + off) / (sj * load<f64>(s + (<usize>k << 3))));
    }
    store<f64>(C + row + (<usize>j << 3), 1.0);
  }
  if (sd != 0) memory.copy(sd, s, <usize>N << 3);
  return Status.Ok;
}
