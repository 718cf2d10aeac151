import { Status } from "../shared/status";

/**
 * l3ewp: the equally weighted portfolio, w_i = 1/N (docs/method.md §4.1).
 * Method: closed form. Preconditions: N ≥ 1 (else `BadDimensions`). Unique.
 * Convergence: not iterative. Complexity: O(N), no allocation.
 * References: DeMiguel, Garlappi & Uppal (2009), RFS 22(5):1915–1953, doi:10.1093/rfs/hhm075.
 */
export function ewp(N: i32, out: usize): Status {
  if (N < 1) return Status.BadDimensions;
  const v = 1.0 / <f64>N;
  for (let i: i32 = 0; i < N; i++) store<f64>(out + (<usize>i << 3), v);
  return Status.Ok;
}
