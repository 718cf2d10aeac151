/**
 * An independent plain-JS walk-forward valuation (docs/method.md §7.2), for the tests: no WebAssembly, naive
 * summation order, written from the definition rather than from the kernel.
 */
export interface RefRebalanced {
  /** S×nTest, series-major. */
  values: Float64Array;
  /** R×S. */
  turnover: Float64Array;
  /** R×S. */
  costs: Float64Array;
}

/**
 * Value S series over the nTest×N closes P: weight set j (W[(j·S + s)·N + i]) is traded at test row rows[j]
 * (rows[0] = 0, the purchase, free); at a later trade the cost is costRate × Σ_i |V⁻·w_i − holding_i| and the rest
 * is invested at the target weights.
 */
export function refRebalance(P: ArrayLike<number>, nTest: number, N: number, W: ArrayLike<number>, S: number,
  rows: readonly number[], costRate: number, capital: number): RefRebalanced {
  const R = rows.length;
  const values = new Float64Array(S * nTest);
  const turnover = new Float64Array(R * S);
  const costs = new Float64Array(R * S);
  for (let s = 0; s < S; s++) {
    let shares = Array.from({ length: N }, (_, i) => (capital * W[s * N + i]) / P[i]);
    values[s * nTest] = capital;
    let j = 1;
    for (let t = 1; t < nTest; t++) {
      const holdings = shares.map((x, i) => x * P[t * N + i]);
      const v = holdings.reduce((a, b) => a + b, 0);
      values[s * nTest + t] = v;
      if (j < R && rows[j] === t) {
        const target = Array.from({ length: N }, (_, i) => W[(j * S + s) * N + i]);
        // turnover from the weights themselves: ½ Σ |w − w̃|, w̃ = drifted weights
        turnover[j * S + s] = 0.5 * target.reduce((a, w, i) => a + Math.abs(w - holdings[i] / v), 0);
        const cost = costRate * target.reduce((a, w, i) => a + Math.abs(v * w - holdings[i]), 0);
        costs[j * S + s] = cost;
        const after = v - cost;
        values[s * nTest + t] = after;
        shares = target.map((w, i) => (after * w) / P[t * N + i]);
        j++;
      }
    }
  }
  return { values, turnover, costs };
}
