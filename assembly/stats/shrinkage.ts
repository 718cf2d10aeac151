import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { checkFinite } from "../checks";
import { arenaMark, arenaRelease, scratchF64 } from "../memory";
import { gram } from "../linalg/gram";

/**
 * Schäfer–Strimmer shrinkage of the correlation towards the identity ("target D", R `corpcor::cor.shrink`),
 * returning the shrunk covariance Σ_s = D R_s D and the intensity λ* (docs/method.md §6.4).
 *
 * Method: z_ti = (x_ti − x̄_i)/s_i (s at ddof = 1); R = ZᵀZ/(n−1); W_tij = z_ti z_tj, W̄_ij = Σ_t W_tij / n;
 *   Var̂(r_ij) = n/(n−1)³ · Σ_t (W_tij − W̄_ij)², evaluated as n/(n−1)³ · (Σ_t z_ti² z_tj² − n W̄_ij²) (the
 *   corpcor form: two Gram matrices, of Z and of Z∘Z);
 *   λ* = clip(Σ_{i≠j} Var̂(r_ij) / Σ_{i≠j} r_ij², 0, 1) (λ* = 1 when every r_ij = 0);
 *   R_s = (1 − λ*)R + λ*I; Σ_s,ii = s_i² (the sample variances, unchanged), Σ_s,ij = (1 − λ*) r_ij s_i s_j.
 *   Gram matrices use 2×2 register blocks with f64x2 lanes on a zero-padded asset-major copy (deterministic).
 * Layout: X n×N row-major (observations × assets); out N×N row-major; lambda → 1 f64 (0 = not wanted).
 * Preconditions: n ≥ 2, N ≥ 1 (else `BadDimensions`); X finite (else `NonFinite`, `lastBadIndex()` = flat index);
 *   every column with s_i > 0 (else `ZeroVariance`, `lastBadIndex()` = asset).
 * Properties: variances unchanged (IVP, EWP unaffected); Σ_s ≻ 0 when λ* > 0; λ* = 1 gives a diagonal Σ_s.
 * Convergence: not iterative. Complexity: ≈ 2N²n flops; scratch 2·N'·n' f64.
 * References: Schäfer & Strimmer (2005), Stat. Appl. Genet. Mol. Biol. 4(1), art. 32, doi:10.2202/1544-6115.1175;
 *   Opgen-Rhein & Strimmer (2007), doi:10.2202/1544-6115.1252 (corpcor).
 */
export function shrinkCovariance(X: usize, n: i32, N: i32, out: usize, lambda: usize): Status {
  return shrinkCovarianceWithFactor(X, n, N, out, lambda, 0, 0);
}

/**
 * `shrinkCovariance`, and (when `U` ≠ 0) the same Σ_s in diagonal-plus-low-rank form for the Newton step of the rpp
 * fallback (docs/method.md §4.6, §6.4): Σ_s ≈ diag(d) + UUᵀ with U_it = s_i z_ti √((1 − λ*)/(n − 1)) (N×n,
 * asset-major) and d_i = max(s_i² − Σ_t U_it², 0) (≈ λ* s_i², the diagonal matched to the dense Σ_s,ii = s_i²).
 * The dense `out` is bit-identical to `shrinkCovariance`'s. Extra complexity N·n; U is N·n f64, d N f64. The scratch
 * (≈ N² + 4N·n f64) is released before returning (`arenaMark`/`arenaRelease`).
 */
export function shrinkCovarianceWithFactor(X: usize, n: i32, N: i32, out: usize, lambda: usize, U: usize,
  d: usize): Status {
  // The scratch (Z, Z∘Z, the N² Gram of Z∘Z) is dead on return: released, so the caller's next step reuses it.
  const mark = arenaMark();
  const st = shrinkInto(X, n, N, out, lambda, U, d);
  arenaRelease(mark);
  return st;
}

/** `shrinkCovarianceWithFactor` without the release of its scratch. */
function shrinkInto(X: usize, n: i32, N: i32, out: usize, lambda: usize, U: usize, d: usize): Status {
  if (n < 2 || N < 1) return Status.BadDimensions;
  if (!checkFinite(X, n * N)) return Status.NonFinite;
  const np = (n + 1) & ~1;
  const Np = (N + 1) & ~1;
  const Z = scratchF64(Np * np);
  const Z2 = scratchF64(Np * np);
  memory.fill(Z, 0, <usize>(Np * np) << 3);
  memory.fill(Z2, 0, <usize>(Np * np) << 3);
  const sd = scratchF64(N);
  const vr = scratchF64(N);
  for (let i: i32 = 0; i < N; i++) {
    let s = 0.0;
    for (let t: i32 = 0; t < n; t++) s += load<f64>(X + (<usize>(t * N + i) << 3));
    const m = s / <f64>n;
    let q = 0.0;
    for (let t: i32 = 0; t < n; t++) {
      const d = load<f64>(X + (<usize>(t * N + i) << 3)) - m;
      store<f64>(Z + (<usize>(i * np + t) << 3), d);
      q += d * d;
    }
    const v = q / <f64>(n - 1);
    if (!(v > 0.0)) {
      setBadIndex(i);
      return Status.ZeroVariance;
    }
    store<f64>(vr + (<usize>i << 3), v);
    const si = Math.sqrt(v);
    store<f64>(sd + (<usize>i << 3), si);
    const inv = 1.0 / si;
    for (let t: i32 = 0; t < n; t++) {
      const a = Z + (<usize>(i * np + t) << 3);
      const z = load<f64>(a) * inv;
      store<f64>(a, z);
      store<f64>(Z2 + (<usize>(i * np + t) << 3), z * z);
    }
  }
  setBadIndex(-1);
  // out ← ZᵀZ (upper+lower), then the off-diagonal statistics
  gram(Z, Np, np, N, out);
  const E2 = scratchF64(N * N);
  gram(Z2, Np, np, N, E2);
  const nn = <f64>n;
  const c1 = nn / ((nn - 1.0) * (nn - 1.0) * (nn - 1.0));
  let num = 0.0;
  let den = 0.0;
  for (let i: i32 = 0; i < N; i++) {
    for (let j: i32 = i + 1; j < N; j++) {
      const sw = load<f64>(out + (<usize>(i * N + j) << 3));
      const wbar = sw / nn;
      const r = sw / (nn - 1.0);
      const varr = c1 * (load<f64>(E2 + (<usize>(i * N + j) << 3)) - nn * wbar * wbar);
      num += varr;
      den += r * r;
    }
  }
  let lam = den > 0.0 ? num / den : 1.0;
  if (lam < 0.0) lam = 0.0;
  if (lam > 1.0) lam = 1.0;
  const keep = 1.0 - lam;
  for (let i: i32 = 0; i < N; i++) {
    const si = load<f64>(sd + (<usize>i << 3));
    store<f64>(out + (<usize>(i * N + i) << 3), load<f64>(vr + (<usize>i << 3)));
    for (let j: i32 = i + 1; j < N; j++) {
      const r = load<f64>(out + (<usize>(i * N + j) << 3)) / (nn - 1.0);
      const v = keep == 0.0 ? 0.0 : keep * r * si * load<f64>(sd + (<usize>j << 3)); // λ* = 1: exact +0
      store<f64>(out + (<usize>(i * N + j) << 3), v);
      store<f64>(out + (<usize>(j * N + i) << 3), v);
    }
  }
  if (lambda != 0) store<f64>(lambda, lam);
  if (U != 0) {
    const c = Math.sqrt(keep / (nn - 1.0));
    for (let i: i32 = 0; i < N; i++) {
      const si = load<f64>(sd + (<usize>i << 3));
      const Ui = U + (<usize>(i * n) << 3);
      let q = 0.0;
      for (let t: i32 = 0; t < n; t++) {
        const u = si * load<f64>(Z + (<usize>(i * np + t) << 3)) * c;
        store<f64>(Ui + (<usize>t << 3), u);
        q += u * u;
      }
      const di = load<f64>(vr + (<usize>i << 3)) - q;
      store<f64>(d + (<usize>i << 3), di > 0.0 ? di : 0.0);
    }
  }
  return Status.Ok;
}
