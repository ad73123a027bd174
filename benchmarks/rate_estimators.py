"""Flip rates from the data itself: clusterability (HOC) and label co-occurrence; writes ``docs/rate-estimators.md``.

    python -m benchmarks.rate_estimators            # the benchmark suite + the generator, first 5000 instances
    python -m benchmarks.rate_estimators --quick    # the generator and medical, the paper's noise; report to /tmp

Protocol: per (dataset, noise family) the stream is built by :class:`ncld_core.config.RunConfig` (random order,
seed 0, the family's per-label rates), cut to its first 5000 instances, in chunks of 500. Per chunk each row's
three nearest neighbours in the chunk's feature space (:func:`ncld_core.model.graph.nearest_neighbors`, the graph
the model builds) feed :class:`ncld_core.model.hoc.NeighbourMoments`, which solves the moments of the
neighbours' noisy labels for ``rho_+``, ``rho_-`` and the clean positive share, and reports a label as *not
identified* where its checks fail. The rates the stream was drawn with are the truth. The assumption itself is
measured with the clean labels the benchmark knows (the model never sees them): the share of a clean positive's
nearest neighbour that is a clean positive too (HOC needs it near 1).

Label co-occurrence, on the same chunks: a ridge ELM (``L`` = 100 random nodes, ridge 1) fitted on the noisy
labels of the chunks before scores each chunk; per label the 80 % of the rows of each observed class it fits with
the smallest squared loss (:func:`ncld_core.model.cooccurrence.small_loss_selection`; none in the first chunk) are
taken as clean and feed :class:`ncld_core.model.cooccurrence.CooccurrenceRates` with every row's noisy labels.
The assumption it cannot test is measured with the clean labels: the share of the selected rows whose noisy label
is the clean one (the method needs it near 1), and the same estimator given the clean labels of the same selected
rows ("selected rows' clean labels": what the method does when the selected rows are clean but not a random
sample), and every row's clean label ("every row clean": what the co-occurrence alone can tell from 5000 rows).
"""

from __future__ import annotations

from benchmarks import _env  # noqa: E402,F401  (before numpy: one BLAS thread, NCLD_DATA_DIR)

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.common import (  # noqa: E402
    REPO, argument_parser, benchmark_datasets, command_line, fnum, git_revision, md_table, utc_now, write_atomic,
)
from benchmarks.parallel import map_parallel  # noqa: E402
from ncld_core.stream.noise_families import NOISE_FAMILIES  # noqa: E402

OUT = REPO / "docs" / "rate-estimators.md"
SYNTHETIC = "synthetic"
CHUNK, LENGTH = 500, 5000
QUICK = [SYNTHETIC, "medical"]
#: The protocol as the report states it (the module docstring's paragraph).
PROTOCOL = __doc__.split("\n\n")[2]
#: The co-occurrence family's protocol (the module docstring's paragraph after it).
PROTOCOL_COOC = __doc__.split("\n\n")[3]
#: The selection model: a ridge ELM's nodes and ridge, and the share of each observed class selected.
SELECT_HIDDEN, SELECT_RIDGE, SELECT_KEEP = 100, 1.0, 0.8


def cell(item) -> dict:
    """One (dataset, family): HOC's rates per label against the truth, and the assumption measured."""
    from ncld_core.config import RunConfig
    from ncld_core.model.graph import gram_matrix, nearest_neighbors
    from ncld_core.model.hoc import NeighbourMoments

    dataset, family = item
    kw = {"n_instances": LENGTH} if dataset == SYNTHETIC else {"dataset": dataset}
    stream = RunConfig(**kw, noise=family, chunk_size=CHUNK).build_stream()
    n = min(stream.Y_noisy.shape[0], LENGTH)
    Y, G = (stream.Y_noisy[:n] > 0).astype(float), (stream.Y_true[:n] > 0).astype(float)
    moments, together, positives = NeighbourMoments(), np.zeros(Y.shape[1]), np.zeros(Y.shape[1])
    for start in range(0, n - CHUNK + 1, CHUNK):
        X = stream.X[start:start + CHUNK]
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        nbrs = nearest_neighbors(gram_matrix(X), 3)
        moments = moments.updated(Y[start:start + CHUNK], nbrs)
        g = G[start:start + CHUNK]
        together += (g * g[nbrs[:, 0]]).sum(axis=0)
        positives += g.sum(axis=0)
    return {"dataset": dataset, "family": family, **scored(moments, stream),
            "cluster": float(np.median((together / np.maximum(positives, 1))[positives > 0])),
            **cooccurrence_cell(stream, Y, G, n)}


def scored(estimator, stream, prefix: str = "") -> dict:
    """An estimator's rates against the stream's: labels identified, median abs. errors, mean bias of rho_+."""
    ok = estimator.identified_
    err_pos = np.abs(estimator.rho_pos_ - stream.rho_pos)[ok]
    err_neg = np.abs(estimator.rho_neg_ - stream.rho_neg)[ok]
    row = {"labels": int(ok.size), "identified": int(ok.sum()),
           "err_pos": float(np.median(err_pos)) if ok.any() else np.nan,
           "err_neg": float(np.median(err_neg)) if ok.any() else np.nan,
           "bias_pos": float(np.mean((estimator.rho_pos_ - stream.rho_pos)[ok])) if ok.any() else np.nan,
           "errors_pos": [float(e) for e in err_pos]}
    return {prefix + k: v for k, v in row.items()}


def cooccurrence_cell(stream, Y, G, n) -> dict:
    """The co-occurrence family on the stream's first ``n`` rows (the module docstring's second paragraph)."""
    from ncld_core.model.cooccurrence import CooccurrenceRates, small_loss_selection
    from ncld_core.model.elm import RandomHiddenLayer

    est, oracle, every = CooccurrenceRates(), CooccurrenceRates(), CooccurrenceRates()
    layer, gram, cross = None, None, None
    clean_selected, selected_total = np.zeros(Y.shape[1]), np.zeros(Y.shape[1])
    for start in range(0, n - CHUNK + 1, CHUNK):
        X = stream.X[start:start + CHUNK]
        y, g = Y[start:start + CHUNK], G[start:start + CHUNK]
        if layer is None:
            layer = RandomHiddenLayer(n_hidden=SELECT_HIDDEN, random_state=0).fit(X)
        H = layer.transform(X)
        if gram is None:
            selected = np.zeros(y.shape, dtype=bool)
        else:
            beta = np.linalg.solve(gram + SELECT_RIDGE * np.eye(SELECT_HIDDEN), cross)
            selected = small_loss_selection(y, np.clip(H @ beta, 0.0, 1.0), keep=SELECT_KEEP)
        est = est.updated(y, selected)
        oracle = oracle.updated(y, selected, clean=g)
        every = every.updated(y, np.ones(y.shape, dtype=bool), clean=g)
        clean_selected += (selected & (y == g)).sum(axis=0)
        selected_total += selected.sum(axis=0)
        gram = H.T @ H if gram is None else gram + H.T @ H
        cross = H.T @ y if cross is None else cross + H.T @ y
    purity = (clean_selected / np.maximum(selected_total, 1))[selected_total > 0]
    return {**scored(est, stream, "co_"), **scored(oracle, stream, "oracle_"), **scored(every, stream, "every_"),
            "purity": float(np.median(purity)) if purity.size else np.nan}


def summary(rows: list[dict], prefix: str) -> tuple[int, int, int, str]:
    """Over every row: labels identified, labels, identified labels with rho_+ off by more than 0.1, their median."""
    errors = np.array([e for r in rows for e in r[prefix + "errors_pos"]])
    return (sum(r[prefix + "identified"] for r in rows), sum(r[prefix + "labels"] for r in rows),
            int((errors > 0.1).sum()), fnum(float(np.median(errors))) if errors.size else "—")


def report(rows: list[dict], argv, seconds: float) -> str:
    table = md_table(
        ["dataset", "noise family", "clean positive's nearest neighbour clean positive (median over labels)",
         "labels identified", "median abs. error of rho_+ (identified)", "median abs. error of rho_- (identified)",
         "mean bias of rho_+"],
        [[r["dataset"], r["family"], fnum(r["cluster"], 2), f"{r['identified']} of {r['labels']}",
          fnum(r["err_pos"]), fnum(r["err_neg"]), fnum(r["bias_pos"])] for r in rows])
    identified, labels, n_off, median = summary(rows, "")
    off = (f" Of the identified labels, {n_off} have rho_+ off by more than 0.1 (median "
           f"{median}): the checks passed though the assumption failed (the fourth moment's "
           "check has little power on a few thousand rows)." if identified else "")
    cooc = md_table(
        ["dataset", "noise family", "selected rows whose noisy label is clean (median over labels)",
         "labels identified", "median abs. error of rho_+ (identified)", "median abs. error of rho_- (identified)",
         "mean bias of rho_+", "selected rows' clean labels: identified, median abs. error of rho_+",
         "every row clean: identified, median abs. error of rho_+"],
        [[r["dataset"], r["family"], fnum(r["purity"], 2), f"{r['co_identified']} of {r['co_labels']}",
          fnum(r["co_err_pos"]), fnum(r["co_err_neg"]), fnum(r["co_bias_pos"]),
          f"{r['oracle_identified']}, {fnum(r['oracle_err_pos'])}", f"{r['every_identified']}, {fnum(r['every_err_pos'])}"]
         for r in rows])
    co, every, oracle = summary(rows, "co_"), summary(rows, "every_"), summary(rows, "oracle_")
    bias = np.array([r["co_bias_pos"] for r in rows if r["co_identified"]])
    return (f"# Flip rates from the data itself (issue 39 item 4)\n\n_Generated by "
            f"`{command_line('benchmarks.rate_estimators', argv)}` on {utc_now()} at {git_revision()} in "
            f"{seconds:.0f} s; do not edit by hand._\n\nTwo estimators of the per-label rates under stated "
            "assumptions, each checked on the data where it can be; neither is used by the model's default.\n\n"
            f"## Clusterability (HOC)\n\n{PROTOCOL}\n\n{table}\n\n"
            f"Over every row: {identified} of {labels} labels identified.{off} Where the median clean positive's nearest "
            "neighbour is not a clean positive, the assumption fails, and the moments mix the two classes: the "
            "estimator then reports the label as not identified, or (where its checks pass by chance) a rho_+ "
            "biased upward. The model's rates stay those of `FlipRateEstimator` (`ncld_core.model.flip_rates`: "
            "anchor values inside the identified set, which is the band); `NeighbourMoments` is a separate "
            "estimator, not used by the model's default.\n\n"
            f"## Label co-occurrence with small-loss selection\n\n{PROTOCOL_COOC}\n\n{cooc}\n\n"
            f"Over every row: {co[0]} of {co[1]} labels identified, {co[2]} of them with rho_+ off by more than 0.1 "
            f"(median abs. error {co[3]}; the mean bias of rho_+ is positive in {int((bias > 0).sum())} of "
            f"{bias.size} rows with a label identified). Given the clean labels of the same selected rows: "
            f"{oracle[0]} identified, {oracle[2]} off by more than 0.1 (median {oracle[3]}). Given every row's "
            f"clean label: {every[0]} identified, {every[2]} off by more than 0.1 (median {every[3]}). The gap "
            "between the last two is the selection's, and little of it is impurity (the selected rows' clean labels do "
            "not close it): the rows a model fits with small loss are not a random sample of each clean class, and "
            "the partners' dependence on the clean label they show differs from the stream's, in either direction "
            "(the bias column). The determinant's check cannot see "
            "this (assumption (ii) of `ncld_core.model.cooccurrence`). Labels not identified are "
            "those with no partner label co-occurring clearly enough, or too few selected rows (a stream of one "
            "chunk has none: no earlier chunk to fit the selecting model on); the estimator gives them no rate "
            "(NaN), and a caller would use the identified set for them (the model uses neither). Even given every "
            "row's clean label, rates off by more than 0.1 remain where partners co-occur weakly: the 2 x 2 "
            "inversion divides by their dependence, and 5000 rows are few for it.\n")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argument_parser("benchmarks.rate_estimators", __doc__)
    parser.add_argument("--quick", action="store_true", help="the generator and medical, the paper's noise")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="the report (default docs/rate-estimators.md)")
    args = parser.parse_args(argv)
    out = args.out or (Path("/tmp/rate-estimators.md") if args.quick else OUT)
    datasets = QUICK if args.quick else [SYNTHETIC, *benchmark_datasets()]
    families = ["paper"] if args.quick else list(NOISE_FAMILIES)
    t0 = time.monotonic()
    rows = map_parallel(cell, [(d, f) for d in datasets for f in families], n_workers=args.workers)
    write_atomic(out, report(rows, argv, time.monotonic() - t0))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
