"""
The distance of distances of HRP (docs/method.md §4.7) in numpy, for bench/suites/distance.ts: the reference the
issue compares the engine's cache-blocked f64x2 kernel with. d = sqrt(clip((1 - C)/2, 0, 1)); D~_ij = ||d_i - d_j||,
computed the BLAS way: G = d d^T (one GEMM), D~ = sqrt(max(g_ii + g_jj - 2 g_ij, 0)).

Usage: python3 distance_of_distances.py N [N ...]; prints one JSON line per N with the median seconds of 3 runs (the
GEMM alone and the whole distance of distances). The thread count is numpy's BLAS setting (OPENBLAS_NUM_THREADS).
The correlation matrix is a seeded one-factor model, the same kind as the engine's bench inputs.
"""
import json
import sys
import time

import numpy as np


def correlation(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((252, 1)) @ rng.uniform(0.2, 1.0, (1, n)) + rng.standard_normal((252, n))
    return np.corrcoef(x, rowvar=False)


def median_seconds(f, runs: int = 3) -> float:
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]


for arg in sys.argv[1:]:
    n = int(arg)
    d = np.sqrt(np.clip((1.0 - correlation(n, n)) / 2.0, 0.0, 1.0))

    def whole() -> np.ndarray:
        g = d @ d.T
        q = np.diag(g)
        return np.sqrt(np.maximum(q[:, None] + q[None, :] - 2.0 * g, 0.0))

    whole()  # warm-up (BLAS threads, page faults)
    print(json.dumps({
        "N": n,
        "gemm_s": median_seconds(lambda: d @ d.T),
        "whole_s": median_seconds(whole),
        "numpy": np.__version__,
    }), flush=True)
