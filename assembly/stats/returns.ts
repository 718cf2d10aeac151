import { Status } from "../shared/status";
import { setBadIndex } from "../result";
import { checkPrices } from "../checks";

/** The smallest normal f64, 2⁻¹⁰²². */
const MIN_NORMAL: f64 = 2.2250738585072014e-308;

/**
 * Daily log-returns of a price matrix.
 *
 * Method: r[t-1][i] = ln(P[t][i] / P[t-1][i]) for t = 1..T-1 (docs/method.md §2), `ln` from AssemblyScript's own
 * NativeMath (never the host's), so results are bit-identical on every machine. Where the ratio is not a normal
 * finite number (it overflows to +∞, or underflows below 2⁻¹⁰²² to a subnormal or 0: closes ≈ 1e-310 or ≈ 1e308),
 * r = ln P[t][i] − ln P[t-1][i] instead, so every return of finite positive closes is finite (docs/decisions.md:
 * the ratio form is kept elsewhere, being the more accurate for close prices and the bits of every pinned result).
 * Layout: `P` is T×N row-major; `out` is (T-1)×N row-major.
 * Preconditions: T ≥ 2, N ≥ 1, every price finite and > 0, else `BadPrice` with `lastBadIndex()` = t·N + i.
 * Complexity: (T-1)·N logs, no allocation.
 */
export function logReturns(P: usize, T: i32, N: i32, out: usize): Status {
  if (T < 2 || N < 1) return Status.BadDimensions;
  if (!checkPrices(P, T * N)) return Status.BadPrice;
  for (let t: i32 = 1; t < T; t++) {
    const cur = P + (<usize>(t * N) << 3);
    const prev = cur - (<usize>N << 3);
    const o = out + (<usize>((t - 1) * N) << 3);
    for (let i: i32 = 0; i < N; i++) {
      const off = <usize>i << 3;
      const a = load<f64>(cur + off);
      const b = load<f64>(prev + off);
      const q = a / b;
      store<f64>(o + off, q >= MIN_NORMAL && q <= f64.MAX_VALUE ? Math.log(q) : Math.log(a) - Math.log(b));
    }
  }
  setBadIndex(-1);
  return Status.Ok;
}

/**
 * Sum rows of `X` (n×N) into buckets: out[b][i] = Σ_{t: bucket[t] = b} X[t][i] (docs/method.md §6.2).
 * `bucket` is i32[n], non-decreasing, values 0..nb-1, each bucket non-empty (the host builds it from dates).
 * Rows are added in ascending t, so the order of summation is fixed.
 * Complexity: n·N adds, no allocation.
 */
export function bucketSums(X: usize, n: i32, N: i32, bucket: usize, nb: i32, out: usize): Status {
  if (n < 1 || N < 1 || nb < 1) return Status.BadDimensions;
  memory.fill(out, 0, <usize>(nb * N) << 3);
  for (let t: i32 = 0; t < n; t++) {
    const b = load<i32>(bucket + (<usize>t << 2));
    if (b < 0 || b >= nb) return Status.BadDimensions;
    const x = X + (<usize>(t * N) << 3);
    const o = out + (<usize>(b * N) << 3);
    for (let i: i32 = 0; i < N; i++) {
      const off = <usize>i << 3;
      store<f64>(o + off, load<f64>(o + off) + load<f64>(x + off));
    }
  }
  return Status.Ok;
}
