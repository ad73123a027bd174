"""The noise gap (issue 26): how much of what label noise costs ELM-NCLD each loss wins back; ``docs/noise-gap.md``.

    python -m benchmarks.noise_gap                  # 8 shared datasets + the generator, 5 seeds, families paper + missing
    python -m benchmarks.noise_gap --quick          # medical + synthetic, 1 seed, paper noise, report to /tmp

1. **The gap.**  Per stream (the paper's protocol, NOTES §5: random order, chunks of 500, test-then-train,
   metrics against the ground truth; the streams of ``python -m benchmarks.compare``: same seeds, orders,
   rates and flips), side by side on the identical stream: ELM-O with the package defaults trained on the
   **clean** labels (the oracle, :data:`~ncld_core.eval.variants.ORACLES`), ELM-O told rates 0
   (**ignoring** the noise), and ELM-O told the true rates with each loss of
   :data:`~ncld_core.model.noisy_targets.LOSSES` (the default, ``"backward"``, ``"forward"``, the paper's, ``"denoise"``)
   and the other candidates of :data:`CANDIDATES`.  "Noise cost recovered" per metric:
   ``(method - ignoring) / (oracle - ignoring)`` (for the ranking loss, lower is better: the same ratio of
   the improvements), from the means over seeds.  Noise families (:mod:`ncld_core.stream.noise_families`):
   the paper's (rates ~ U[0.2, 0.4]), missing labels and mixed per-label rates.
2. **The limit.**  The oracle's learning curve: the oracle learning only a fraction of each chunk's
   instances (clean labels; scored on every instance), one seed; the noisy learner's **equivalent clean
   sample size** is the fraction at which the oracle's AP equals the default's (log-linear interpolation).
3. **The ceiling.**  Every correction at every ridge of :func:`ceiling_grid`, with and without the shrinkage,
   side by side; per dataset the best chosen with hindsight (on the scores it is judged by): what tuning these
   corrections can buy at most, on these streams.

Every number in the report comes from this command.
"""

from __future__ import annotations

from benchmarks import _env  # noqa: E402,F401  (before numpy: one BLAS thread, NCLD_DATA_DIR)

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.common import (  # noqa: E402
    REPO, argument_parser, command_line, fnum, md_table, benchmark_datasets, utc_now, write_atomic,
)
from benchmarks.parallel import map_calls  # noqa: E402
from ncld_core.stream.noise_families import NOISE_FAMILIES  # noqa: E402

CHUNK = 500
ORACLE = "ELM-O (clean labels)"  # the runner feeds this name the ground truth (ORACLES)
IGNORING = "ignoring the noise (told rates 0)"
DEFAULT = "backward (default)"  # loss="auto" with told rates
#: The backward solve with the flips' share shrunk across labels: also on the presets and in the timing.
SHRUNK = "backward, shrunk (0.5)"
#: The losses and variants measured beside the oracle and the ignoring twin: name -> ELMNCLD parameters
#: (beyond the package defaults; every one is told the stream's true rates).
CANDIDATES = {
    DEFAULT: {"loss": "backward"},
    "paper's loss (noisy targets)": {"loss": "paper"},
    "denoise (posterior targets)": {"loss": "denoise"},
    "denoise-knn (posterior, neighbours)": {"loss": "denoise-knn"},
    # Forward correction of the squared loss, min ||rho_- + d H phi - y||^2 + a ||phi||^2, is the backward
    # regression with the ridge a / d_j^2 on each label j (ncld_core.model.ridge solves each at its own):
    "forward (ridge / d_j^2 per label)": {"loss": "forward"},
    # The backward solve with what the flips add shrunk across labels (ncld_core.model.noise_shrinkage):
    # half the Wiener factor's noise share, and the Wiener factor.
    SHRUNK: {"loss": "backward", "shrinkage": 0.5},
    "backward, shrunk (1)": {"loss": "backward", "shrinkage": 1.0},
    "forward, shrunk (0.5)": {"loss": "forward", "shrinkage": 0.5},
    "forward, shrunk (1)": {"loss": "forward", "shrinkage": 1.0},
    # Rates estimated online (not told): what loss="auto" chooses between, and the forward loss.
    "forward, rates estimated": {"loss": "forward", "flip_rates": "estimate"},
    "backward, rates estimated": {"loss": "backward", "flip_rates": "estimate"},
    "paper's loss, rates estimated (auto)": {"loss": "paper", "flip_rates": "estimate"},
}
METRICS = {"average_precision": ("AP", True), "micro_f1": ("micro-F1", True), "ranking_loss": ("ranking loss", False)}
FAMILIES = tuple(NOISE_FAMILIES)  # every registered noise family (ncld_core.stream.noise_families)
FRACTIONS = (1.0, 0.5, 0.25, 0.1, 0.05, 0.02)
QUICK_DATASETS = ["medical", "synthetic"]


def _stream(dataset: str, family: str, seed: int, max_instances: int | None = None):
    """The stream of ``benchmarks.compare``'s cell ``(dataset, "noisy", seed)``, noise family ``family``, cut to
    its first ``max_instances`` instances (after shuffling) when it is longer."""
    from benchmarks.grid import Cell
    from ncld_core.data import load_dataset

    options = {} if family == "paper" else {"noise": family}
    if max_instances and dataset != "synthetic" and load_dataset(dataset, paths=False).n_instances > max_instances:
        options["n_instances"] = int(max_instances)
    cfg = Cell(dataset=dataset, setting="noisy", seed=seed, methods=("ELM-O",), options=options).config()
    return cfg, cfg.build_stream()


def run_gap(arg) -> list[dict]:
    """One stream ``(dataset, family, seed, candidate names)``: every model side by side; one row per model."""
    dataset, family, seed, names, *cut = arg
    cfg, stream = _stream(dataset, family, seed, *cut)
    return _side_by_side(dataset, family, seed, cfg, stream, {name: CANDIDATES[name] for name in names})


def _side_by_side(dataset, family, seed, cfg, stream, specs: dict) -> list[dict]:
    """The oracle, the ignoring twin and ELM-O with each of ``specs`` (name -> parameters; told the stream's rates
    unless a spec estimates them) learning ``stream`` side by side; one row per model."""
    from ncld_core.eval.runner import PrequentialRunner
    from ncld_core.model.elm_ncld import ELMNCLD

    params = cfg.model_params()
    told = dict(rho_pos=stream.rho_pos, rho_neg=stream.rho_neg, flip_rates="given")
    zero = dict(rho_pos=0.0, rho_neg=0.0, flip_rates="given")
    models = {ORACLE: ELMNCLD(**params, **zero), IGNORING: ELMNCLD(**params, **zero)}
    for name, spec in specs.items():
        models[name] = ELMNCLD(**{**params, **spec}, **({} if spec.get("flip_rates") == "estimate" else told))
    result = PrequentialRunner(models, CHUNK).run(stream)
    summary = result.summary()
    seconds = {name: float(np.sum([c.seconds.get(name, 0.0) for c in result.chunks])) for name in models}
    return [{"dataset": dataset, "family": family, "seed": seed, "model": name, "seconds": seconds[name],
             "instances": int(stream.n_instances), **{m: float(summary.loc[name, m]) for m in METRICS}}
            for name in models]


def run_curve(arg) -> list[dict]:
    """The oracle learning a fraction of each chunk (clean labels), scored on every instance: one row per fraction."""
    from ncld_core.eval.metrics import MetricAccumulator
    from ncld_core.model.elm_ncld import ELMNCLD

    dataset, family, seed, *cut = arg
    cfg, stream = _stream(dataset, family, seed, *cut)
    params = cfg.model_params()
    # What the variance argument predicts: per label, the clean label's variance over the backward target's
    # (the noise a regression on it averages away), pooled over labels: the share of clean instances worth one.
    d = 1.0 - stream.rho_pos - stream.rho_neg
    target = (stream.Y_noisy - stream.rho_neg) / d
    ratio = float(stream.Y_true.var(axis=0).sum() / target.var(axis=0).sum())
    inflation = float(np.mean(1.0 / d**2))
    rows = []
    for fraction in FRACTIONS:
        model = ELMNCLD(**params, rho_pos=0.0, rho_neg=0.0, flip_rates="given")
        acc = MetricAccumulator()
        rng = np.random.default_rng(seed)
        for index, (start, stop) in enumerate(stream.chunk_bounds(CHUNK)):
            X, G = stream.X[start:stop], stream.Y_true[start:stop]
            if index > 0:
                scores = model.ranking_scores(X)
                acc.update(G, scores, model.decide(scores))
            m = max(2, int(round(fraction * (stop - start))))
            if stop - start >= 2:
                take = np.sort(rng.choice(stop - start, min(m, stop - start), replace=False))
                model.partial_fit(X[take], G[take])
        rows.append({"dataset": dataset, "family": family, "seed": seed, "fraction": fraction,
                     "variance_ratio": ratio, "inflation": inflation, **{k: acc.cumulative()[k] for k in METRICS}})
    return rows


#: The hindsight ceiling's grid (:func:`run_ceiling`): the corrections of :data:`CANDIDATES` told the rates, each at
#: ridges a quarter to sixteen times the default's, with and without the shrinkage across labels; name -> parameters.
CEILING_ALPHAS = (1 / 16, 0.25, 1.0, 4.0, 16.0)  # multiples of the default ridge


def ceiling_grid(default_alpha: float) -> dict:
    """The variants :func:`run_ceiling` runs: ``loss`` x ridge x shrinkage, the paper's loss and the posterior
    denoising at the default ridge, and the ridge chosen online (``alpha="auto"``)."""
    grid = {}
    for loss in ("backward", "forward"):
        for m in CEILING_ALPHAS:
            for shrinkage in (0.0, 1.0):
                grid[f"{loss}, ridge x{m:g}" + (", shrunk" if shrinkage else "")] = {
                    "loss": loss, "alpha": default_alpha * m, "shrinkage": shrinkage}
    grid["paper's loss"] = {"loss": "paper"}
    grid["denoise-knn"] = {"loss": "denoise-knn"}
    grid["backward, ridge chosen online"] = {"loss": "backward", "alpha": "auto"}
    return grid


def run_ceiling(arg) -> list[dict]:
    """One stream ``(dataset, family, seed, cut)``: the oracle, the ignoring twin and every variant of
    :func:`ceiling_grid` side by side (told the rates); one row per model."""
    dataset, family, seed, *cut = arg
    cfg, stream = _stream(dataset, family, seed, *cut)
    return _side_by_side(dataset, family, seed, cfg, stream, ceiling_grid(cfg.model_params()["alpha"]))


#: The losses compared on the dashboard's presets (short streams, some with a planted change): name -> parameters.
PRESET_LOSSES = {"backward": {"loss": "backward"}, "forward": {"loss": "forward"}, SHRUNK: CANDIDATES[SHRUNK]}


def run_preset(arg) -> list[dict]:
    """One preset of the dashboard told its stream's rates (``arg``: its name, or ``(name, decision rule)``): ELM-O
    and ELM-I (retrain at a firing) with each loss of :data:`PRESET_LOSSES`, its other settings as the preset
    sets them (its decision rule unless one is given);
    cumulative micro-F1 and AP, and the micro-F1 of the chunks from the preset's first change on (from chunk 1
    without one)."""
    from ncld_core.config import PRESETS
    from ncld_core.eval.runner import PrequentialRunner, told_rates
    from ncld_core.eval.variants import make_model

    name, decision = (arg, None) if isinstance(arg, str) else arg
    cfg = PRESETS[name]
    stream = cfg.build_stream()
    rates = told_rates(cfg.model_rates, stream)
    params = {**cfg.model_params(), **({"decision": decision} if decision else {})}
    keys = {(variant, loss): f"{variant} · {loss}" for variant in ("ELM-O", "ELM-I") for loss in PRESET_LOSSES}
    models = {key: make_model(variant, rates=rates, **{**params, **PRESET_LOSSES[loss]})
              for (variant, loss), key in keys.items()}
    result = PrequentialRunner(models, cfg.chunk_size).run(stream)
    summary = result.summary()
    after = min((int(c.position) for c in stream.change_points), default=cfg.chunk_size) // cfg.chunk_size
    rows = []
    for (variant, loss), key in keys.items():
        later = [c.metrics[key]["micro_f1"] for c in result.chunks if c.chunk >= max(after, 1) and key in c.metrics]
        rows.append({"preset": name, "variant": variant, "loss": loss, "decision": params["decision"],
                     "chunk_size": cfg.chunk_size, "micro_f1": float(summary.loc[key, "micro_f1"]),
                     "average_precision": float(summary.loc[key, "average_precision"]),
                     "micro_f1_after": float(np.mean(later)), "from_chunk": after})
    return rows


def preset_calls() -> list:
    """:func:`run_preset` for every preset told its rates, at its own decision rule and at the package default."""
    from ncld_core.config import PRESETS, RunConfig

    default = RunConfig().decision
    return [(run_preset, (name, rule)) for name, cfg in PRESETS.items() if cfg.model_rates != "estimate"
            for rule in dict.fromkeys([cfg.decision, default])]


def preset_section(rows: pd.DataFrame) -> list[str]:
    """The presets' table: each loss's micro-F1 and AP per preset, decision rule and variant, and the means."""
    if rows.empty:
        return []
    keys = ["preset", "decision", "variant"]
    table = rows.pivot_table(index=keys, columns="loss", values=["micro_f1", "average_precision", "micro_f1_after"],
                             sort=False)
    body = []
    for (preset, decision, variant), r in table.iterrows():
        body.append([preset, decision, variant, *(f"{r[(m, loss)]:.3f}" for m in
                                                  ("micro_f1", "micro_f1_after", "average_precision")
                                                  for loss in PRESET_LOSSES)])
    means = rows.groupby(["decision", "loss"])[["micro_f1", "micro_f1_after", "average_precision"]].mean()
    sizes = ", ".join(f"{p} {n}" for p, n in rows.groupby("preset", sort=False)["chunk_size"].first().items())
    return ["## The dashboard's presets: the generator, short streams", "",
            "Each preset told its stream's rates (`ncld_core.config.PRESETS`, its settings; `run_preset`), ELM-O and "
            "ELM-I (retrain) with each loss, at the preset's own decision rule and at the package default rule. "
            f"Chunk sizes: {sizes}. micro-F1 after: the mean per-chunk micro-F1 from the preset's first planted "
            "change on (from chunk 1 in the presets without one).", "",
            md_table(["preset", "decision rule", "variant",
                      *(f"{m}: {loss}" for m in ("micro-F1", "micro-F1 after", "AP") for loss in PRESET_LOSSES)],
                     body, "lll" + "r" * 3 * len(PRESET_LOSSES)), "",
            "Means over the presets and variants, per decision rule: " + "; ".join(
                f"`{decision}`, {loss}: micro-F1 {means.loc[(decision, loss), 'micro_f1']:.3f}, after the change "
                f"{means.loc[(decision, loss), 'micro_f1_after']:.3f}, AP {means.loc[(decision, loss), 'average_precision']:.3f}"
                for decision in dict.fromkeys(rows["decision"]) for loss in PRESET_LOSSES) + ".", ""]


def time_losses(dataset: str = "enron", repeats: int = 5) -> pd.DataFrame:
    """Seconds per chunk (predict + partial_fit, test-then-train over the whole stream, told the rates) of each
    loss, interleaved ``repeats`` times in this process; the median per loss."""
    from ncld_core.model.elm_ncld import ELMNCLD
    from ncld_core.model.noisy_targets import LOSSES

    cfg, stream = _stream(dataset, "paper", 0)
    params = cfg.model_params()
    bounds = list(stream.chunk_bounds(CHUNK))
    rows = []
    for rep in range(repeats):
        for loss, spec in {**{name: {"loss": name} for name in LOSSES}, SHRUNK: CANDIDATES[SHRUNK]}.items():
            model = ELMNCLD(**{**params, **spec}, rho_pos=stream.rho_pos, rho_neg=stream.rho_neg)
            t0 = time.perf_counter()
            for index, (start, stop) in enumerate(bounds):
                X, Y = stream.X[start:stop], stream.Y_noisy[start:stop]
                if index > 0:
                    model.predict(X)
                model.partial_fit(X, Y)
            seconds = time.perf_counter() - t0
            rows.append({"loss": loss, "repeat": rep, "seconds_per_chunk": seconds / len(bounds),
                         "instances_per_second": stream.n_instances / seconds})
    return pd.DataFrame(rows).groupby("loss", sort=False)[["seconds_per_chunk", "instances_per_second"]].median()


def recovered(means: pd.Series, metric: str, model: str, *, oracle: str = ORACLE, ignoring: str = IGNORING) -> float:
    """``(model - ignoring) / (oracle - ignoring)`` in ``metric`` (NaN when the noise cost nothing); for a loss
    (lower is better) the same ratio of the improvements.

    >>> round(recovered(pd.Series({ORACLE: 0.8, IGNORING: 0.4, "m": 0.6}), "average_precision", "m"), 3)
    0.5
    >>> round(recovered(pd.Series({ORACLE: 0.1, IGNORING: 0.3, "m": 0.25}), "ranking_loss", "m"), 3)
    0.25
    """
    top, low, mid = means[oracle], means[ignoring], means[model]
    cost = top - low if METRICS[metric][1] else low - top
    gain = mid - low if METRICS[metric][1] else low - mid
    return float(gain / cost) if cost > 0 else float("nan")


def equivalent_fraction(curve: pd.DataFrame, value: float, metric: str = "average_precision") -> float:
    """The fraction of each chunk at which the oracle's ``metric`` equals ``value`` (log-linear between the
    measured fractions; beyond the smallest measured: its value as a bound, flagged by the caller). A loss
    (``METRICS``: lower is better) falls as the fraction grows, a gain rises.

    >>> curve = pd.DataFrame({"fraction": [0.1, 1.0], "average_precision": [0.4, 0.6], "ranking_loss": [0.3, 0.1]})
    >>> round(equivalent_fraction(curve, 0.5), 3), round(equivalent_fraction(curve, 0.2, "ranking_loss"), 3)
    (0.316, 0.316)
    >>> equivalent_fraction(curve, 0.35, "ranking_loss")   # worse than the smallest fraction: its value
    0.1
    """
    c = curve.sort_values("fraction")
    sign = 1.0 if METRICS[metric][1] else -1.0  # as a gain: rising with the fraction
    f, y = c["fraction"].to_numpy(), sign * c[metric].to_numpy()
    value = sign * value
    if value <= y[0]:
        return float(f[0])
    if value >= y[-1]:
        return float(f[-1])
    i = int(np.searchsorted(y, value))  # y is increasing in f where it matters; the first crossing
    i = max(1, min(i, len(y) - 1))
    t = (value - y[i - 1]) / (y[i] - y[i - 1]) if y[i] != y[i - 1] else 0.0
    return float(np.exp(np.log(f[i - 1]) + t * (np.log(f[i]) - np.log(f[i - 1]))))


def _pm(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if v.size > 1 else f"{v.mean():.3f}"


def gap_section(df: pd.DataFrame, family: str, names: list[str]) -> list[str]:
    sub = df[df["family"] == family]
    datasets = list(dict.fromkeys(sub["dataset"]))
    seeds = sorted(sub["seed"].unique())
    L = [f"### Noise family `{family}` ({len(seeds)} seed(s): {', '.join(map(str, seeds))})", ""]
    models = [ORACLE, IGNORING, *names]
    for metric, (label, _) in METRICS.items():
        rows = []
        for d in datasets:
            cell = sub[sub["dataset"] == d]
            means = cell.groupby("model")[metric].mean()
            row = [d] + [_pm(cell[cell["model"] == m][metric]) for m in models]
            row += [f"{100 * recovered(means, metric, m):.0f} %" for m in names]
            rows.append(row)
        L += [f"**{label}** (mean ± std over seeds; recovered = (method − ignoring) / (oracle − ignoring), "
              "from the means)", "",
              md_table(["dataset", "oracle (clean labels)", "ignoring (told 0)", *names,
                        *[f"recovered: {n}" for n in names]], rows, "l" + "r" * (len(models) + len(names))), ""]
    return L


def done_when(df: pd.DataFrame, family: str, method: str) -> list[str]:
    """The issue's first "Done when" line, counted over the shared datasets (the generator apart)."""
    sub = df[(df["family"] == family) & (df["dataset"] != "synthetic")]
    datasets = list(dict.fromkeys(sub["dataset"]))
    shares, below, rl_ratio = {}, [], {}
    for d in datasets:
        means = sub[sub["dataset"] == d].groupby("model").mean(numeric_only=True)
        shares[d] = recovered(means["average_precision"], "average_precision", method)
        if means.loc[method, "average_precision"] < means.loc[IGNORING, "average_precision"]:
            below.append(d)
        rl_ratio[d] = means.loc[method, "ranking_loss"] / means.loc[ORACLE, "ranking_loss"]
    costs = [sub[sub["dataset"] == d].groupby("model")["average_precision"].mean() for d in datasets]
    cost = float(np.mean([c[ORACLE] - c[IGNORING] for c in costs]))
    n_half = sum(s >= 0.5 for s in shares.values())
    n_rl = sum(r <= 1.5 for r in rl_ratio.values())
    missed = {d: s for d, s in shares.items() if not s >= 0.5}
    return [
        f"- What the noise costs in AP (oracle − ignoring), mean over the shared datasets: {cost:.3f}.",
        f"- AP gap recovered >= 50 %: **{n_half} of {len(datasets)}** shared datasets"
        + (f" (missed: {', '.join(f'{d} {100 * s:.0f} %' for d, s in missed.items())})" if missed else "") + ".",
        f"- Below ignoring the noise in AP: **{len(below)}** ({', '.join(below) or 'none'}).",
        f"- Ranking loss within 1.5x the oracle's: **{n_rl} of {len(datasets)}** (ratios: "
        + ", ".join(f"{d} {r:.2f}" for d, r in rl_ratio.items()) + ").",
    ]


def choice_section(gap: pd.DataFrame, families, all_names: list[str]) -> list[str]:
    """Which candidate wins back most, per family: mean share of the AP and ranking-loss cost recovered over the
    streams (8 shared datasets + the generator), the streams where each is best in AP, and the verdict; the
    candidates told the rates compete, those estimating them are compared apart (what loss="auto" picks)."""
    names = [n for n in all_names if CANDIDATES[n].get("flip_rates") != "estimate"]
    estimating = [n for n in all_names if CANDIDATES[n].get("flip_rates") == "estimate"]
    L = []
    overall = gap[gap["model"].isin(names)].groupby(["family", "model"])["average_precision"].mean().unstack(0)
    for family in families:
        sub = gap[gap["family"] == family]
        means = sub.groupby(["dataset", "model"])[list(METRICS)].mean()
        datasets = list(dict.fromkeys(sub["dataset"]))
        rows, share = [], {}
        best_ap = {n: 0 for n in names}
        for d in datasets:
            m = means.loc[d]
            top = max(names, key=lambda n: m.loc[n, "average_precision"])
            best_ap[top] += 1
        shared = [d for d in datasets if d != "synthetic"]
        for n in names:
            per = {metric: [recovered(means.loc[d][metric], metric, n) for d in datasets] for metric in METRICS}
            share[n] = float(np.nanmean(per["average_precision"]))
            rows.append([n, f"{100 * share[n]:.0f} %", f"{100 * np.nanmean(per['micro_f1']):.0f} %",
                         f"{100 * np.nanmean(per['ranking_loss']):.0f} %",
                         f"{np.mean([means.loc[d].loc[n, 'average_precision'] for d in datasets]):.3f}",
                         f"{best_ap[n]} of {len(datasets)}",
                         # issue 26's count: the shared datasets where the AP cost recovered is at least half
                         f"{sum(recovered(means.loc[d]['average_precision'], 'average_precision', n) >= 0.5 for d in shared)}"
                         f" of {len(shared)}"])
        winner = max(share, key=share.get)
        L += [f"Noise family `{family}`, over {len(datasets)} streams ({', '.join(datasets)}):", "",
              md_table(["candidate", "AP cost recovered (mean over streams)", "micro-F1", "ranking loss", "mean AP",
                        "best AP on", "AP cost recovered >= 50 % on (shared)"], rows, "lrrrrrr"), "",
              f"Largest mean share of the AP cost recovered: **{winner}**"
              + (" (the default)." if winner == DEFAULT else f"; the default is {DEFAULT} ({100 * share[DEFAULT]:.0f} %)."),
              ""]
    if len(families) > 1:
        mean_ap = overall.loc[names, list(families)].mean(axis=1)
        best = mean_ap.idxmax()
        L += [f"Across the noise families ({', '.join(families)}; the mean over families of the mean AP over streams): "
              + ", ".join(f"{n} {mean_ap[n]:.4f}" for n in mean_ap.sort_values(ascending=False).index)
              + f". Best across the families: **{best}**" + (" (the default)." if best == DEFAULT else "."), ""]
    if estimating:
        rows = []
        for family in families:
            sub = gap[gap["family"] == family]
            means = sub.groupby(["dataset", "model"])["average_precision"].mean().unstack()
            shared = means.drop(index="synthetic", errors="ignore")
            for n in estimating:
                better = int((shared[n] > shared[IGNORING]).sum())
                rows.append([family, n, f"{means[n].mean():.3f}", f"{100 * np.nanmean([recovered(means.loc[d], 'average_precision', n) for d in means.index]):.0f} %",
                             f"{better} of {len(shared)}"])
        L += ["Rates estimated online (not told), no trusted rows: the losses `loss=\"auto\"` chooses between (the "
              "paper's when estimating without a trusted sample; the forward loss with one unless the first "
              "chunk's labels look missing, measured in "
              "`docs/rates-unknown.md`) and the forward loss:", "",
              md_table(["family", "candidate", "mean AP", "AP cost recovered (mean)", "above ignoring on (shared)"],
                       rows, "llrrr"), ""]
    return L


def curve_section(curves: pd.DataFrame, gap: pd.DataFrame, family: str) -> list[str]:
    sub = curves[curves["family"] == family]
    if sub.empty:
        return []
    seed = int(sub["seed"].iloc[0])
    L = [f"### The oracle's learning curve, noise family `{family}` (seed {seed} only)", "",
         "The oracle learns a random fraction of each chunk's instances with their clean labels and is scored "
         "on every instance. Equivalent clean sample size: the fraction of each chunk at which the oracle's AP "
         f"equals the default's (told the rates, seed {seed}), log-linear between the measured fractions; "
         "\"<=\" where the default is below the smallest fraction's AP. What the variance argument predicts "
         "beside it: \"mean 1/d²\" is the inflation of the backward target's noise over the labels "
         "(d = 1 − ρ₊ − ρ₋), \"variance ratio\" the clean labels' variance over the backward targets' "
         "(summed over labels, on this stream): the share of a clean instance one noisy instance is worth "
         "to a least-squares fit.", ""]
    rows = []
    for d in dict.fromkeys(sub["dataset"]):
        c = sub[sub["dataset"] == d]
        g = gap[(gap["family"] == family) & (gap["dataset"] == d) & (gap["seed"] == seed)].set_index("model")
        ap = {f: float(c[c["fraction"] == f]["average_precision"].iloc[0]) for f in FRACTIONS}
        row = [d, f"{c['inflation'].iloc[0]:.1f}", f"{c['variance_ratio'].iloc[0]:.3f}"] + [f"{ap[f]:.3f}" for f in FRACTIONS]
        if DEFAULT in g.index and IGNORING in g.index:
            mine = float(g.loc[DEFAULT, "average_precision"])
            frac = equivalent_fraction(c, mine)
            flag = "<= " if mine <= min(ap.values()) else ""
            # the AP that recovers half the cost, and the clean fraction at which the oracle reaches it
            half = float(g.loc[IGNORING, "average_precision"]) + 0.5 * (ap[1.0] - float(g.loc[IGNORING, "average_precision"]))
            need = equivalent_fraction(c, half)
            row += [f"{mine:.3f}", f"{flag}{frac:.3f} ({flag}{frac * CHUNK:.0f} of {CHUNK})",
                    f"{half:.3f}: {need:.3f} ({need * CHUNK:.0f} of {CHUNK})"]
        else:
            row += ["", "", ""]
        rows.append(row)
    L += [md_table(["dataset", "mean 1/d²", "variance ratio", *[f"AP, oracle on {f:g}" for f in FRACTIONS],
                    "AP, default (noisy)", "equivalent clean fraction (instances per chunk)",
                    "AP recovering half the cost: clean fraction it takes"], rows,
                   "l" + "r" * (len(FRACTIONS) + 5)), ""]
    return L + ranking_limit(sub, gap, family, seed)


#: Issue 26's bound on the default's ranking loss, as a multiple of the oracle's.
RANKING_TARGET = 1.5


def ranking_limit(sub: pd.DataFrame, gap: pd.DataFrame, family: str, seed: int) -> list[str]:
    """The ranking loss on the same learning curve: how many clean labels the ``RANKING_TARGET`` x oracle target
    asks the noisy learner to be worth, beside how many it is worth (both by the oracle's curve)."""
    rows, asked, worth = [], {}, {}
    for d in dict.fromkeys(sub["dataset"]):
        c = sub[sub["dataset"] == d]
        g = gap[(gap["family"] == family) & (gap["dataset"] == d) & (gap["seed"] == seed)].set_index("model")
        rl = {f: float(c[c["fraction"] == f]["ranking_loss"].iloc[0]) for f in FRACTIONS}
        if DEFAULT not in g.index:
            continue
        mine, bound = float(g.loc[DEFAULT, "ranking_loss"]), RANKING_TARGET * rl[1.0]
        asked[d] = equivalent_fraction(c, bound, "ranking_loss")
        worth[d] = equivalent_fraction(c, mine, "ranking_loss")
        flag_a = "<= " if bound >= max(rl.values()) else ""
        flag_w = "<= " if mine >= max(rl.values()) else ""
        rows.append([d, *[f"{rl[f]:.3f}" for f in FRACTIONS], f"{mine:.3f}", f"{mine / rl[1.0]:.2f}",
                     f"{flag_w}{worth[d]:.3f} ({flag_w}{worth[d] * CHUNK:.0f} of {CHUNK})",
                     f"{bound:.3f}: {flag_a}{asked[d]:.3f} ({flag_a}{asked[d] * CHUNK:.0f} of {CHUNK})"])
    if not rows:
        return []
    shared = [d for d in asked if d != "synthetic"]
    more = [d for d in shared if asked[d] > worth[d]]
    ratio = {d: float(sub[sub["dataset"] == d]["variance_ratio"].iloc[0]) for d in shared}
    beyond = [d for d in shared if asked[d] > ratio[d]]
    L = [f"The ranking loss on the same curve (seed {seed}). The issue's bound, {RANKING_TARGET:g}x the oracle's ranking "
         "loss, is reached by the oracle learning the fraction in the last column; the default ranks like the "
         "oracle on the fraction before it.", "",
         md_table(["dataset", *[f"ranking loss, oracle on {f:g}" for f in FRACTIONS], "ranking loss, default (noisy)",
                   "default / oracle", "equivalent clean fraction by ranking loss",
                   f"{RANKING_TARGET:g}x the oracle's: clean fraction it takes"], rows, "l" + "r" * (len(FRACTIONS) + 4)),
         "",
         f"On {len(more)} of {len(shared)} shared datasets the bound asks for the ranking of more clean labels than "
         "the default's noisy ones are worth by this curve"
         + (f" ({', '.join(f'{d}: {asked[d]:.2f} asked, {worth[d]:.2f} worth' for d in more)})" if more else "")
         + f"; on {len(beyond)} of {len(shared)} it asks for more than the variance argument says a noisy instance is "
         "worth to a least-squares fit (the variance ratio above)"
         + (f" ({', '.join(f'{d} {asked[d] / ratio[d]:.1f}x' for d in beyond)})" if beyond else "") + ".", ""]
    return L


def ceiling_section(ceiling: pd.DataFrame, family: str) -> list[str]:
    """The hindsight ceiling: per shared dataset, the largest share of the AP cost (and the smallest ranking-loss
    ratio) any variant of :func:`ceiling_grid` reaches, each chosen after seeing the scores it is judged by, and the
    best single variant for all datasets; counted against issue 26's targets."""
    sub = ceiling[(ceiling["family"] == family) & (ceiling["dataset"] != "synthetic")]
    if sub.empty:
        return []
    means = sub.groupby(["dataset", "model"])[list(METRICS)].mean()
    datasets = list(dict.fromkeys(sub["dataset"]))
    variants = [m for m in dict.fromkeys(sub["model"]) if m not in (ORACLE, IGNORING)]
    share = pd.DataFrame({v: [recovered(means.loc[d]["average_precision"], "average_precision", v) for d in datasets]
                          for v in variants}, index=datasets)
    ratio = pd.DataFrame({v: [means.loc[(d, v), "ranking_loss"] / means.loc[(d, ORACLE), "ranking_loss"]
                              for d in datasets] for v in variants}, index=datasets)
    fixed = (share >= 0.5).sum()
    top = fixed.idxmax()  # the single variant meeting the AP target on the most datasets (ties: the first listed)
    # where the best sits at an end of the ridge grid, a ridge beyond it might do better: said, not hidden
    ends = {f"ridge x{m:g}" for m in (min(CEILING_ALPHAS), max(CEILING_ALPHAS))}
    at_end = [d for d in datasets if any(e in share.loc[d].idxmax().split(", ") for e in ends)]
    rows = [[d, f"{100 * share.loc[d].max():.0f} %", share.loc[d].idxmax(), f"{ratio.loc[d].min():.2f}",
             ratio.loc[d].idxmin(), f"{100 * share.loc[d, top]:.0f} %"] for d in datasets]
    n_seeds = sub["seed"].nunique()
    n_half, n_rl = int((share.max(axis=1) >= 0.5).sum()), int((ratio.min(axis=1) <= RANKING_TARGET).sum())
    return [f"### Noise family `{family}` ({n_seeds} seed(s), {len(variants)} variants told the rates)", "",
            "Each variant of `ceiling_grid` (the corrections of the candidates above at ridges "
            + ", ".join(f"{m:g}x" for m in CEILING_ALPHAS) + " the default's, with and without the shrinkage across "
            "labels; the paper's loss; the posterior denoising; the ridge chosen online) runs beside the oracle and "
            "the ignoring twin on each stream. Per dataset, the best of them **chosen after seeing the very scores "
            "it is judged by**: no rule that picks one of these variants from the data can do better on these "
            "streams. It bounds what choosing among them buys, not what any ridge could"
            + (f" (the best AP sits at an end of the ridge grid on {', '.join(at_end)})" if at_end else
               " (the best AP is inside the ridge grid on every dataset)") + ".", "",
            md_table(["dataset", "AP cost recovered, best variant", "which", "ranking loss / oracle's, best variant",
                      "which", f"AP cost recovered: {top}"], rows, "lrlrlr"), "",
            f"Chosen with hindsight per dataset, AP gap recovered >= 50 % on **{n_half} of {len(datasets)}** shared "
            f"datasets and ranking loss within {RANKING_TARGET:g}x the oracle's on **{n_rl} of {len(datasets)}** "
            f"(issue 26 asks for 6 of 8 each, from one default). One variant for all: {top} reaches 50 % on "
            f"{int(fixed[top])} of {len(datasets)}.", ""]


def parse_args(argv):
    p = argument_parser("benchmarks.noise_gap", __doc__)
    p.add_argument("--datasets", nargs="+", default=None, help="default: the benchmark suite + synthetic")
    p.add_argument("--seeds", type=int, default=None, help="seeds 0..n-1 (default 5; --quick 1)")
    p.add_argument("--families", nargs="+", default=None, choices=list(FAMILIES))
    p.add_argument("--candidates", nargs="+", default=None, choices=list(CANDIDATES))
    p.add_argument("--no-curve", action="store_true", help="skip the oracle's learning curve")
    p.add_argument("--curve-families", nargs="+", default=["paper"], choices=list(FAMILIES),
                   help="noise families of the learning curve (default: paper)")
    p.add_argument("--no-ceiling", action="store_true", help="skip the hindsight ceiling (ceiling_grid)")
    p.add_argument("--ceiling-families", nargs="+", default=["paper"], choices=list(FAMILIES),
                   help="noise families of the hindsight ceiling (default: paper)")
    p.add_argument("--no-timing", action="store_true", help="skip the per-chunk timing of the losses on enron")
    p.add_argument("--no-presets", action="store_true", help="skip the dashboard presets' comparison of the losses")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--max-instances", type=int, default=None,
                   help="cut longer streams to their first N instances, after shuffling (default: whole streams)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--doc", default=None, help="report (default docs/noise-gap.md; --quick: /tmp/noise-gap.md)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parse_args(argv)
    t0 = time.perf_counter()
    datasets = a.datasets or (QUICK_DATASETS if a.quick else [*benchmark_datasets(), "synthetic"])
    seeds = a.seeds if a.seeds is not None else (1 if a.quick else 5)
    families = a.families or (["paper"] if a.quick else list(FAMILIES))
    names = a.candidates or list(CANDIDATES)
    doc = Path(a.doc or ("/tmp/noise-gap.md" if a.quick else REPO / "docs" / "noise-gap.md"))
    cut = a.max_instances
    jobs = [(run_gap, (d, f, s, tuple(names), cut)) for f in families for d in datasets for s in range(seeds)]
    if not a.no_curve:
        jobs += [(run_curve, (d, f, 0, cut)) for f in families if f in a.curve_families for d in datasets]
    if not a.no_ceiling:
        jobs += [(run_ceiling, (d, f, s, cut)) for f in families if f in a.ceiling_families for d in datasets
                 for s in range(seeds)]
    out = map_calls(jobs, a.workers, progress=True, desc="streams")
    gap = pd.DataFrame([r for (fn, _), rows in zip(jobs, out) if fn is run_gap for r in rows])
    curves = pd.DataFrame([r for (fn, _), rows in zip(jobs, out) if fn is run_curve for r in rows])
    ceiling = pd.DataFrame([r for (fn, _), rows in zip(jobs, out) if fn is run_ceiling for r in rows])
    timing = None if a.no_timing or a.quick else time_losses()
    presets = pd.DataFrame() if a.quick or a.no_presets else \
        pd.DataFrame([r for rows in map_calls(preset_calls(), a.workers) for r in rows])
    wall = time.perf_counter() - t0

    L = ["# The noise gap: what label noise costs ELM-NCLD and how much each loss wins back", "",
         f"_Generated by `{command_line('benchmarks.noise_gap', argv)}` on {utc_now()}; do not edit by hand — "
         f"rerun the command ({wall / 60:.1f} min on this machine)._", "",
         (__doc__ or "").split("\n\n", 2)[2].split("Every number")[0].strip(), "",
         *([f"Streams longer than {cut} instances are cut to their first {cut} (after shuffling; "
            "`--max-instances`): their numbers are of the cut streams, not of `docs/results.md`'s.", ""] if cut else []),
         "Candidates (ELM-O, package defaults otherwise; told the stream's true rates unless \"rates estimated\"; "
         "the default `loss=\"auto\"` is the backward loss when told the rates and, when estimating them, the paper's "
         "without a trusted sample, as here):",
         ""]
    L += [f"- **{n}**: `{CANDIDATES[n]}`" for n in names]
    L += ["", "## Done when (issue 26), the default, from these streams", ""]
    for f in families:
        L += [f"Noise family `{f}`:", "", *done_when(gap, f, DEFAULT), ""]
    L += ["## Which loss: the candidates side by side", "", *choice_section(gap, families, names)]
    L += preset_section(presets)
    L += ["## The gap per dataset", ""]
    for f in families:
        L += gap_section(gap, f, names)
    if not curves.empty:
        L += ["## The limit: the oracle's learning curve and the equivalent clean sample size", ""]
        for f in families:
            L += curve_section(curves, gap, f)
    if not ceiling.empty:
        L += ["## The ceiling: every correction at every ridge, the best chosen with hindsight", ""]
        for f in families:
            L += ceiling_section(ceiling, f)
    secs = gap.groupby("model")["seconds"].sum()
    inst = gap.groupby("model")["instances"].sum()
    L += ["## Time", "", "Seconds to score and learn, summed over every stream (one core per stream; the first "
          "model of a stream, the oracle, pays for the graph and P_D of the clean-label cache, the second for "
          "the noisy one's):", "",
          md_table(["model", "total s", "instances / s"],
                   [[m, fnum(secs[m], 1), f"{inst[m] / secs[m]:.0f}"] for m in [ORACLE, IGNORING, *names]], "lrr"), ""]
    if timing is not None:
        base = timing.loc["paper", "seconds_per_chunk"]
        L += ["Per chunk on enron (predict + partial_fit, chunks of 500, told the rates, the package defaults but the "
              "loss; median of 5 interleaved repetitions in one process, after the streams above; one BLAS thread):",
              "", md_table(["loss", "ms / chunk", "instances / s", "cost / the paper loss's"],
                           [[loss, f"{1000 * r['seconds_per_chunk']:.1f}", f"{r['instances_per_second']:.0f}",
                             f"{r['seconds_per_chunk'] / base:.2f}x"] for loss, r in timing.iterrows()], "lrrr"), ""]
    write_atomic(doc, "\n".join(L).rstrip() + "\n")
    print(f"wrote {doc} ({wall:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
