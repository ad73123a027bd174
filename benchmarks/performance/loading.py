"""Sections 5c and 5d: loading a dataset (parse against the parsed cache), and the graph's Gram product."""

from __future__ import annotations

import os
import time

from benchmarks.common import md_table, paper_datasets
from benchmarks.performance.protocol import log


def large_datasets(min_instances: int = 1_500) -> list[str]:
    """The paper suite's datasets whose parse a user waits for (more than ``min_instances`` instances)."""
    from ncld_core.data.catalog import registry

    reg = registry()
    return [d for d in paper_datasets() if reg[d].get("instances", 0) > min_instances]


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

    names = paper_datasets() if names is None else names

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
