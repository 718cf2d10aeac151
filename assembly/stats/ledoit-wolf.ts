import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { checkFinite, checkVarianceFloor, VARIANCE_FLOOR } from "../checks";
import { scratchF64 } from "../memory";
import { gram } from "../linalg/gram";

/**
 * Ledoit–Wolf shrinkage of the covariance towards the scaled identity (option `covariance: "ledoit-wolf"`,
 * docs/method.md §6.5), returning Σ* and the intensity δ = b²/d².
 *
 * Method (Ledoit & Wolf 2004, with the normalised Frobenius inner product ⟨A,B⟩ = tr(ABᵀ)/N; the conventions of
 *   scikit-learn's `ledoit_wolf(assume_centered=False)`, docs/method.md §6.5):
 *   x_k = the k-th observation minus the column means (k = 1…n); S = (1/n) Σ_k x_k x_kᵀ (divisor n, not n − 1);
 *   m = ⟨S, I⟩ = tr(S)/N; d² = ‖S − mI‖²;
 *   b̄² = (1/n²) Σ_k ‖x_k x_kᵀ − S‖², evaluated as (1/(nN)) Σ_ij (Σ_k x_ki² x_kj² / n − S_ij²) (two Gram
 *   matrices, of the centred data and of its squares); b² = min(b̄², d²);
 *   δ = b²/d² (δ = 0 when d² = 0, i.e. S already ∝ I); Σ* = δ·m·I + (1 − δ)·S.
 *   m is evaluated as S_00 + Σ_i (S_ii − S_00)/N, so that equal variances give d² = 0 exactly.
 * Layout: X n×N row-major (observations × assets); out N×N row-major; delta → 1 f64 (0 = not wanted).
 * Preconditions: n ≥ 2, N ≥ 1 (else `BadDimensions`); X finite (else `NonFinite`, `lastBadIndex()` = flat index);
 *   every sample variance S_ii > 0 and ≥ `VARIANCE_FLOOR` · max_j S_jj (else `ZeroVariance`, `lastBadIndex()` =
 *   asset): the shrunk diagonal no longer shows a degenerate asset, so the floor of docs/method.md §9 is applied to
 *   the sample variances here.
 * Properties: δ ∈ [0, 1]; Σ* symmetric PSD (≻ 0 when δ > 0); tr Σ* = tr S; scale-equivariant (X → cX gives
 *   c²Σ*, the same δ). The result is on the divisor-n scale: the weights are scale-invariant (§3.4).
 * Convergence: not iterative. Complexity: ≈ 2N²n flops; scratch 2·N'·n' + N² f64.
 * References: Ledoit & Wolf (2004), "A well-conditioned estimator for large-dimensional covariance matrices",
 *   J. Multivariate Analysis 88(2), 365–411, doi:10.1016/S0047-259X(03)00096-4 (Lemma 3.2, Theorem 3.2).
 */
export function ledoitWolfCovariance(X: usize, n: i32, N: i32, out: usize, delta: usize): Status {
  if (n < 2 || N < 1) return Status.BadDimensions;
  if (!checkFinite(X, n * N)) return Status.NonFinite;
  setBadIndex(-1);
  const np = (n + 1) & ~1;
  const Np = (N + 1) & ~1;
  const Xc = scratchF64(Np * np);
  const X2 = scratchF64(Np * np);
  memory.fill(Xc, 0, <usize>(Np * np) << 3);
  memory.fill(X2, 0, <usize>(Np * np) << 3);
  const nn = <f64>n;
  for (let i: i32 = 0; i < N; i++) {
    let s = 0.0;
    for (let t: i32 = 0; t < n; t++) s += load<f64>(X + (<usize>(t * N + i) << 3));
    const mu = s / nn;
    for (let t: i32 = 0; t < n; t++) {
      const x = load<f64>(X + (<usize>(t * N + i) << 3)) - mu;
      store<f64>(Xc + (<usize>(i * np + t) << 3), x);
      store<f64>(X2 + (<usize>(i * np + t) << 3), x * x);
    }
  }
  // out ← XcᵀXc, E2 ← (Xc∘Xc)ᵀ(Xc∘Xc), both full (upper and lower)
  gram(Xc, Np, np, N, out);
  const E2 = scratchF64(N * N);
  gram(X2, Np, np, N, E2);
  const NN = N * N;
  const invn = 1.0 / nn;
  for (let k: i32 = 0; k < NN; k++) {
    const p = out + (<usize>k << 3);
    store<f64>(p, load<f64>(p) * invn);
  }
  const st = checkVarianceFloor(out, N, VARIANCE_FLOOR);
  if (st != Status.Ok) return st;
  setBadIndex(-1);
  const s00 = load<f64>(out);
  let dm = 0.0;
  for (let i: i32 = 1; i < N; i++) dm += load<f64>(out + (<usize>(i * N + i) << 3)) - s00;
  const m = s00 + dm / <f64>N;
  let d2 = 0.0;
  let b2 = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    for (let j: i32 = 0; j < N; j++) {
      const sij = load<f64>(out + (<usize>(i * N + j) << 3));
      const e = i == j ? sij - m : sij;
      d2 += e * e;
      b2 += load<f64>(E2 + (<usize>(i * N + j) << 3)) * invn - sij * sij;
    }
  }
  d2 /= <f64>N;
  b2 /= nn * <f64>N;
  if (b2 < 0.0) b2 = 0.0; // rounding only: b̄² is a sum of squares
  if (b2 > d2) b2 = d2;
  const del = d2 > 0.0 ? b2 / d2 : 0.0;
  const keep = 1.0 - del;
  const target = del * m;
  for (let i: i32 = 0; i < N; i++) {
    for (let j: i32 = 0; j < N; j++) {
      const p = out + (<usize>(i * N + j) << 3);
      const v = keep * load<f64>(p);
      store<f64>(p, i == j ? v + target : v);
    }
  }
  if (delta != 0) store<f64>(delta, del);
  return Status.Ok;
}
