import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { scratchF64 } from "../memory";

/**
 * Sample covariance of the columns of X (MATH.md §3.3, §6.3): mean-centred, ddof = 1, explicitly symmetric.
 *
 * Method: two passes. (1) column means; (2) the centred data is transposed into an asset-major scratch block
 * Xc (N' × n', rows padded with zeros to even length and N' even), then Σ_jk = ⟨Xc_j, Xc_k⟩ / (n − 1) for k ≥ j,
 * computed in 2×2 register blocks with f64x2 (four dot products share each load), and mirrored.
 * Layout: `X` is n×N row-major (observations × assets); `out` is N×N row-major; `means` (optional, 0 = none)
 * receives the N column means.
 * Preconditions: n ≥ 2, N ≥ 1, X finite (else `NonFinite`, `lastBadIndex()` = flat index).
 * Complexity: ≈ N²·n flops; scratch N'·n' f64 (heap, released by the host's next reset).
 * Determinism: fixed lane split and summation order.
 */
export function covariance(X: usize, n: i32, N: i32, out: usize, means: usize): Status {
  if (n < 2 || N < 1) return Status.BadDimensions;
  const total = n * N;
  for (let k: i32 = 0; k < total; k++) {
    if (!isFinite(load<f64>(X + (<usize>k << 3)))) {
      setBadIndex(k);
      return Status.NonFinite;
    }
  }
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
  const scale = 1.0 / <f64>(n - 1);
  const rowBytes = <usize>np << 3;
  for (let j: i32 = 0; j < Np; j += 2) {
    const a0 = Xc + <usize>j * rowBytes;
    const a1 = a0 + rowBytes;
    for (let k: i32 = j; k < Np; k += 2) {
      const b0 = Xc + <usize>k * rowBytes;
      const b1 = b0 + rowBytes;
      let s00 = f64x2.splat(0.0), s01 = f64x2.splat(0.0), s10 = f64x2.splat(0.0), s11 = f64x2.splat(0.0);
      for (let t: i32 = 0; t < np; t += 2) {
        const off = <usize>t << 3;
        const x0 = v128.load(a0 + off), x1 = v128.load(a1 + off);
        const y0 = v128.load(b0 + off), y1 = v128.load(b1 + off);
        s00 = f64x2.add(s00, f64x2.mul(x0, y0));
        s01 = f64x2.add(s01, f64x2.mul(x0, y1));
        s10 = f64x2.add(s10, f64x2.mul(x1, y0));
        s11 = f64x2.add(s11, f64x2.mul(x1, y1));
      }
      const c00 = (f64x2.extract_lane(s00, 0) + f64x2.extract_lane(s00, 1)) * scale;
      const c01 = (f64x2.extract_lane(s01, 0) + f64x2.extract_lane(s01, 1)) * scale;
      const c10 = (f64x2.extract_lane(s10, 0) + f64x2.extract_lane(s10, 1)) * scale;
      const c11 = (f64x2.extract_lane(s11, 0) + f64x2.extract_lane(s11, 1)) * scale;
      putSym(out, N, j, k, c00);
      putSym(out, N, j, k + 1, c01);
      putSym(out, N, j + 1, k, c10);
      putSym(out, N, j + 1, k + 1, c11);
    }
  }
  return Status.Ok;
}

// @ts-ignore: decorator
@inline function putSym(out: usize, N: i32, j: i32, k: i32, v: f64): void {
  if (j < N && k < N && j <= k) {
    store<f64>(out + (<usize>(j * N + k) << 3), v);
    store<f64>(out + (<usize>(k * N + j) << 3), v);
  }
}

/**
 * Correlation matrix and volatilities from a covariance matrix (MATH.md §2, §3.3):
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
    for (let k: i32 = 0; k < N; k++) {
      const off = <usize>(j * N + k) << 3;
      store<f64>(C + off, j == k ? 1.0 : load<f64>(S + off) / (sj * load<f64>(s + (<usize>k << 3))));
    }
  }
  if (sd != 0) memory.copy(sd, s, <usize>N << 3);
  return Status.Ok;
}
