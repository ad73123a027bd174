"""Sections 5c, 5d and 5e: loading a dataset (parse against the parsed cache), the graph's Gram product, and
building the synthetic stream."""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks.common import md_table, benchmark_datasets
from benchmarks.performance.protocol import log


def large_datasets(min_instances: int = 1_500) -> list[str]:
    """The benchmark suite's datasets whose parse a user waits for (more than ``min_instances`` instances)."""
    from ncld_core.data.catalog import registry

    reg = registry()
    return [d for d in benchmark_datasets() if reg[d].get("instances", 0) > min_instances]


def bench_load(names=None) -> dict:
    """Seconds to load each dataset (default :func:`large_datasets`) by parsing its ARFF and from the parsed cache
    (best of 3 each).

    The parse is what the first Run on a dataset pays after install (or after its file or the parser changed);
    every later load in any process reads the cache (``ncld_core.data.parsed_cache``).
    """
    import tempfile

    from ncld_core.data import load_dataset, parsed_cache

    names = large_datasets() if names is None else names
    rows, old = [], os.environ.get(parsed_cache.CACHE_ENV)
    with tempfile.TemporaryDirectory() as folder:
        try:
            for name in names:
                try:
                    os.environ[parsed_cache.CACHE_ENV] = ""  # off: every load parses
                    parse = min(timed(load_dataset, name) for _ in range(3))
                    os.environ[parsed_cache.CACHE_ENV] = folder
                    load_dataset(name)  # fills the cache
                    cached = min(timed(load_dataset, name) for _ in range(3))
                except ValueError as exc:  # not in the data folder
                    log(f"load {name}: skipped ({exc})")
                    continue
                rows.append({"dataset": name, "parse_s": parse, "cached_s": cached, "ratio": parse / cached})
        finally:
            if old is None:
                os.environ.pop(parsed_cache.CACHE_ENV, None)
            else:
                os.environ[parsed_cache.CACHE_ENV] = old
    return {"rows": rows}


def bench_synthetic(n: int = 100_000, n_timed: int = 10, chunk: int = 500) -> dict:
    """Seconds to build the embedded default's synthetic stream of ``n`` instances (20 features, 10 labels, a
    growth point; best of 3, nothing kept), against the default model's prediction and update on ``n_timed`` chunks
    of it, scaled to ``n`` instances: the share of a run the build costs. Then the dashboard's default stream
    (``RunConfig()``), built afresh and rebuilt with its noise moved (the generator's kept structure:
    ``ncld_core.stream.synthetic.STRUCTURES_KEPT``), best of 3 each.
    """
    from ncld_core.config import RunConfig
    from ncld_core.model import ELMNCLD
    from ncld_core.stream.synthetic import kept_structures_clear, make_synthetic_stream

    from benchmarks.performance.chunks import time_model_chunk

    def build():
        return make_synthetic_stream(n, n_features=20, n_labels=10, schedule=f"growth@{n // 2}", random_state=0)

    def afresh(fn):
        kept_structures_clear()
        return fn()

    make_synthetic_stream(1000, random_state=0)  # imports and caches, not timed
    build_s = min(timed(afresh, build) for _ in range(3))
    default_s = min(timed(afresh, RunConfig().build_stream) for _ in range(3))
    kept_s = min(timed(RunConfig(rho_high=0.3 + 0.01 * i).build_stream) for i in range(3))
    stream = build()
    model, per_chunk = ELMNCLD(random_state=0), []
    for i in range(n_timed + 1):  # the first chunk (no prediction yet) is not timed
        rows = slice(i * chunk, (i + 1) * chunk)
        predict_s, fit_s = time_model_chunk(model, stream.X[rows], stream.Y_noisy[rows])
        if i:
            per_chunk.append(predict_s + fit_s)
    model_s = float(np.median(per_chunk)) * n / chunk
    return {"n": n, "build_s": build_s, "model_s": model_s, "share": build_s / model_s, "default_s": default_s,
            "default_kept_s": kept_s}


def synthetic_section(synthetic: dict | None) -> list[str]:
    """Section 5e: the embedded default's stream build against the run it feeds."""
    from ncld_core.config import SYNTHETIC_DEFAULT_LENGTH
    from ncld_core.stream.synthetic import REFERENCE_SIZE

    if not synthetic or "build_s" not in synthetic:
        return []
    s = synthetic
    return ["", "### 5e. Building the synthetic stream", "",
            f"The embedded default has no file to parse: its stream is generated "
            f"(`ncld_core.stream.synthetic.make_synthetic_stream`). {s['n']:,} instances x 20 features x 10 labels "
            f"with a growth point took {s['build_s']:.2f} s (best of 3), this run; the default model's prediction "
            f"and update on the same instances take {s['model_s']:.1f} s (median of ten chunks of 500, scaled), so "
            f"the build is {100 * s['share']:.1f} % of the run it feeds."
            + (f" The dashboard's default stream ({SYNTHETIC_DEFAULT_LENGTH:,} instances) took "
               f"{1e3 * s['default_s']:.0f} ms built afresh, {1e3 * s['default_kept_s']:.0f} ms rebuilt with its noise "
               f"moved: the generator keeps the structure (clusters, label weights, offsets solved on a "
               f"{REFERENCE_SIZE:,}-instance reference sample) of the settings it built last (best of 3 each)."
               if "default_s" in s else "")]


def timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def load_section(load: dict | None) -> list[str]:
    """Section 5c: what the first Run on a dataset pays to parse it, and what every later load pays."""
    if not load or not load.get("rows"):
        return []
    return ["", "### 5c. Loading a dataset: parsing against the parsed cache", "",
            "The first read of a dataset after install parses its ARFF (the dashboard reads a dataset when it "
            "is chosen, before Run); the arrays are then kept in the parsed cache "
            "(`ncld_core.data.parsed_cache`, `~/.cache/ncld/parsed`) and every later load, in any process, "
            "reads them. Best of 3 loads each, this run:", "",
            md_table(["dataset", "parse s", "from the cache s", "ratio"],
                     [[r["dataset"], f"{r['parse_s']:.3f}", f"{r['cached_s']:.3f}", f"{r['ratio']:.0f}x"]
                      for r in load["rows"]])]


def bench_gram(names=None, sizes=(250, 500)) -> dict:
    """The kNN graph's Gram product of a scaled chunk, dense (BLAS) against sparse, best of 5 each, and which
    one ``ncld_core.model.graph.use_dense_gram`` picks (the dashboard's chunk of 250 and the paper's 500).
    ``names``: default the paper suite."""
    import scipy.sparse as sp

    from ncld_core.data import load_dataset
    from ncld_core.model.elm import RandomHiddenLayer
    from ncld_core.model.graph import use_dense_gram

    names = benchmark_datasets() if names is None else names

    def best(fn):
        return min(timed(fn) for _ in range(5))

    rows = []
    for name in names:
        try:
            X = load_dataset(name).X
        except ValueError as exc:
            log(f"gram {name}: skipped ({exc})")
            continue
        if not sp.issparse(X):
            continue
        for n in sizes:
            chunk = sp.csr_matrix(X[n:2 * n])  # the second chunk (the first initialises the model)
            Xs = RandomHiddenLayer(8, "auto", 0).fit(chunk).scale(chunk)
            dense = best(lambda: (lambda D: D @ D.T)(Xs.toarray()))
            sparse = best(lambda: (Xs @ Xs.T).toarray())
            rows.append({"dataset": name, "n": Xs.shape[0], "d": Xs.shape[1], "dense_ms": 1e3 * dense,
                         "sparse_ms": 1e3 * sparse, "picked": "dense" if use_dense_gram(Xs) else "sparse"})
    return {"rows": rows}


def gram_section(gram: dict | None) -> list[str]:
    """Section 5d: does the cost model pick the faster Gram product on each shared dataset?"""
    if not gram or not gram.get("rows"):
        return []
    rows = gram["rows"]
    right = [r for r in rows if (r["dense_ms"] <= r["sparse_ms"]) == (r["picked"] == "dense")]
    lost = sum(max(0.0, r[f"{r['picked']}_ms"] - min(r["dense_ms"], r["sparse_ms"])) for r in rows)
    return ["", "### 5d. The kNN graph's Gram product: dense or sparse", "",
            "A sparse chunk's `X X^T` (N x N, dense) is computed as a dense BLAS product or as a sparse one, "
            "whichever `ncld_core.model.graph.use_dense_gram` expects to cost less. Both timed on the scaled "
            f"second chunk, best of 5, this run: the rule picked the faster product in {len(right)} of {len(rows)} "
            f"cases (its wrong picks cost {lost:.2f} ms in all).", "",
            md_table(["dataset", "N x d", "dense ms", "sparse ms", "picked", "faster"],
                     [[r["dataset"], f"{r['n']} x {r['d']:,}", f"{r['dense_ms']:.2f}", f"{r['sparse_ms']:.2f}",
                       r["picked"], "dense" if r["dense_ms"] <= r["sparse_ms"] else "sparse"] for r in rows])]
