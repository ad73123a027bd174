"""The chunks every section times, and the timing of one chunk."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from benchmarks.performance.protocol import FLIP_SEED, NOISE_SEED


def noisy_dataset(name):
    """``X``, noisy ``Y`` and the flip rates of dataset ``name`` under the paper's noise."""
    from ncld_core.data import load_dataset
    from ncld_core.stream.noise import apply_label_noise, draw_flip_rates

    ds = load_dataset(name)
    q = ds.Y.shape[1]
    rho_pos, rho_neg = draw_flip_rates(q, random_state=NOISE_SEED)
    Y = apply_label_noise(ds.Y, rho_pos, rho_neg, random_state=FLIP_SEED)
    X = ds.X.tocsr() if sp.issparse(ds.X) else np.asarray(ds.X)
    return X, Y, rho_pos, rho_neg


def chunk_list(X, Y, size, count):
    """``count`` chunks of ``size`` rows, cycling through the full chunks of ``X`` (slices made once)."""
    n_full = X.shape[0] // size
    if n_full < 1:
        raise ValueError(f"{X.shape[0]} instances: not one chunk of {size}")
    distinct = [(X[i * size : (i + 1) * size], Y[i * size : (i + 1) * size]) for i in range(min(n_full, count))]
    return [distinct[i % len(distinct)] for i in range(count)], n_full


def synthetic_sparse(n, d, q, nnz, seed):
    """Sparse rows with ~``nnz`` non-zeros in ``d`` columns, labels from a linear score (cardinality ~2), noisy."""
    from ncld_core.stream.noise import apply_label_noise, draw_flip_rates

    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=min(1.0, nnz / d), format="csr", random_state=rng, dtype=np.float64)
    W = rng.standard_normal((d, q))
    score = np.asarray(X @ W) + rng.normal(0.0, 0.5, size=(n, q))
    Y_true = (score > np.quantile(score, 1.0 - 2.0 / q, axis=0)).astype(np.int8)
    rho_pos, rho_neg = draw_flip_rates(q, random_state=seed + 1)
    return X, apply_label_noise(Y_true, rho_pos, rho_neg, random_state=seed + 2), rho_pos, rho_neg


def time_model_chunk(model, X, Y):
    """Seconds of ``decision_function`` (skipped before the first chunk) and of ``partial_fit``."""
    t0 = time.perf_counter()
    if model.is_fitted:
        model.decision_function(X)
    t1 = time.perf_counter()
    model.partial_fit(X, Y)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def median(xs):
    return float(np.median(xs)) if len(xs) else float("nan")


def paper_params():
    from benchmarks.woodbury_reference import PAPER_PARAMS

    # the Woodbury reference runs the paper's Eq. (Hfd) on the paper's loss (it regresses the noisy labels)
    return dict(PAPER_PARAMS, detector="paper", loss="paper")
