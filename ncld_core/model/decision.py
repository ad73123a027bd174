"""Decision rules: from ELM-NCLD's label scores ``O = H Phi`` to 0/1 predictions under label noise.

The paper predicts ``o_tj > 0``.  The scores regress the *noisy* labels in {-1, +1}:
under class-conditional flips (Eq. NR), ``E[y_tj | x] = 2 (rho_-^j + p_tj d_j) - 1`` with
``p_tj = P(g_tj = 1 | x_t)`` the clean probability and ``d_j = 1 - rho_+^j - rho_-^j``.  So
threshold 0 means ``p > (1/2 - rho_-) / d``, far below 1/2 when ``rho_-`` is large, and on a
sparse label set it predicts many more labels than are relevant (docs/results.md).  Every
rule here reads the score on the **noise-corrected scale**::

    u_tj = ((o_tj + 1) / 2 - rho_-^j) / d_j          (an estimate of p_tj when o is calibrated)

and each is an estimate of a decision that is right for the *clean* labels:

``"paper"``
    ``o_tj > 0`` (reproduction only).
``"bayes"``
    ``u_tj > 1/2``, i.e. ``o_tj > rho_-^j - rho_+^j``: the Hamming-loss-optimal rule if the
    scores were calibrated regressions of the noisy labels.  Stateless.
``"topk"``
    per instance the ``k = round(c)`` labels of largest ``u``, ``c`` the running noise-corrected
    cardinality (the moment estimate of :mod:`ncld_core.cardinality`).
``"prevalence"``
    per label, ``o_tj > t_j`` with ``t_j`` the ``1 - pi_j`` quantile of the latest chunk's scores,
    ``pi_j`` the running clean prevalence
    (moment estimate ``(f_j - rho_-^j) / d_j`` cut to [0, 1]): the predicted positive rate of
    each label matches its estimated clean rate.
``"f1"``
    ``u_tj > tau`` with one ``tau`` maximising an unbiased-in-counts estimate of micro-F1 on the
    latest chunk.  The clean positives among any set ``T`` of entries are estimated from the
    noisy labels as ``TP(T) = sum_{(t,j) in T} (y_tj - rho_-^j) / d_j`` (``E[y | g] = rho_- + g d``),
    the clean positives of the chunk as ``P = TP(all)``, so ``F1(T) = 2 TP(T) / (|T| + P)``;
    ``T`` runs over the top-``m`` entries by ``u`` (one global threshold, the form of the
    micro-F1-optimal rule on calibrated scores).
``"f1-bounded"``
    as ``"f1"`` with ``|T| <= P``: never more predicted positives than estimated clean ones.
    Then ``FP + FN = |T| + P - 2 TP <= 2 P (1 - F1)``, i.e. the Hamming loss stays below
    ``2 (1 - F1)`` times the all-negative predictor's (whose Hamming loss is ``P / (N q)``).
    With *estimated* rates and a cardinality a trusted sample pins down (the regression estimate
    ``c`` of :mod:`ncld_core.model.cardinality`, unbiased whatever the rates; with fewer than 8 trusted rows,
    the first chunks of a 1 % sample, their plain mean, unbiased and noisy), the counts above rest on
    per-label rates the noisy labels do not identify (a ``rho_-`` biased up on a frequent label lowers
    both ``P`` and its ``u``, and the top-``m`` set shrinks to nearly nothing, issue 39): the rule then
    predicts the top ``round(c N)`` entries by ``u``, the count the trusted sample vouches for.
    Without a trusted sample, or with one where the model regresses the noisy labels (``loss="paper"``,
    which ``loss="auto"`` keeps with trusted rows when the first chunk's labels look missing), where the
    estimated rates leave the correction resting on what the noisy labels do not pin down (``rates_free``:
    ``rho_-`` bounded near 0 on most labels, ``rho_+`` not identified: missing labels), the rule falls back to
    the one that needs no rates: the same count-based threshold at
    rates 0 (``u = (o + 1) / 2``, the observed labels as counts), what a model told rates 0 predicts from
    these scores.  (Under missing labels the corrections bought less than 0.01 micro-F1 on every shared
    dataset even told the true rates, and the estimated ones cost up to 0.015 on a dataset's mean, issue 39;
    ``docs/rates-unknown.md``.)
``"f1-bounded-rates"``
    ``"f1-bounded"`` reading the estimated rates' counts even where a trusted sample pins the
    cardinality (the rule before issue 39, kept for comparison).
``"f1-budget"``
    as ``"f1"`` with the estimated Hamming loss at most :data:`HL_BUDGET` times the all-negative
    predictor's: ``|T| + P - 2 TP(T) <= HL_BUDGET * P``.
``"hamming"``
    ``u_tj > tau`` with ``tau`` minimising the estimated Hamming loss ``|T| + P - 2 TP(T)`` over the
    same top-``m`` sets: an entry is worth predicting when it is more likely relevant than not,
    judged by the noisy labels instead of by the calibration of ``u``.

Scores of a chunk: the model's prequential ones (the model before it learnt the chunk: honest
about its errors; in-sample scores overfit the noisy labels and made ``"f1"`` flood in
``docs/decisions.md``'s first measurements), except when the model starts afresh (first chunk,
drift reset), where the new model's own scores are all there is.

Margins and probabilities (what ``ELMNCLD.decision_function`` and ``predict_proba`` return):
every rule predicts an entry when its score passes a threshold (per entry: one global ``tau`` on
the corrected scale, a per-label one, or for ``"topk"`` a per-instance one), so
:func:`decision_margin` gives ``a (u - tau)``, positive exactly where the rule predicts, and
:func:`decide` is ``decision_margin > 0``.  ``a > 0`` is the slope of a **noise-aware Platt
calibration** of the corrected scale, fitted on each chunk's scores and noisy labels under the
flip model (:func:`fit_calibration`)::

    P(g = 1 | x) ~ p(u) = sigmoid(a u + b),     P(y = 1 | x) = rho_- + d p(u)

so the margin is ``logit p(u) - logit p(tau)``: the log-odds of relevance with the relevant
entries weighted ``(1 - theta) / theta`` against the others, ``theta = p(tau)`` the rule's
threshold on the probability scale (the threshold a cost-sensitive rule puts on a calibrated
probability; ``theta = F1* / 2`` for the F1-optimal rule).  :func:`margin_probability`,
``sigmoid(margin)``, is that weighted probability: 1/2 at the threshold, the way
``LogisticRegression(class_weight=...)``'s ``predict_proba`` is.  :func:`clean_probability`,
``p(u)``, is the calibrated estimate of ``P(g = 1 | x)`` itself.

State: :func:`update_state` folds one learnt chunk into the running state (a dict of floats and
arrays, so it checkpoints): per-chunk statistics are averaged with weight ``1 / min(n, W)``
(``W`` = :data:`WINDOW`; the mean over the first ``W`` chunks, then an exponential average),
and a chunk after which the model was reset by a drift (retrain / adjust) starts it afresh.
All rules' statistics are kept, so ``decision`` can change without refitting.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> g = (rng.random((400, 5)) < 0.2).astype(int)              # clean labels, prevalence 0.2
>>> flip = rng.random(g.shape) < np.where(g == 1, 0.2, 0.3)
>>> y = np.where(flip, 1 - g, g)                               # noisy: rho_+ = 0.2, rho_- = 0.3
>>> p = 0.45 + 0.35 * g                                        # clean probability: 0.45 or 0.8
>>> o = 2 * (0.3 + 0.5 * p) - 1 + rng.normal(0, 0.01, g.shape)  # a calibrated regression of y in {-1, 1}
>>> state = update_state(None, o, y, [0.2] * 5, [0.3] * 5, cardinality=1.0, prevalence=[0.2] * 5)
>>> float((decide("paper", state, o) == 1).mean().round(2))  # threshold 0 floods
1.0
>>> float((decide("prevalence", state, o) == 1).mean().round(2))
0.2
>>> float((decide("bayes", state, o) == g).mean())        # u > 1/2 separates the clean labels
1.0
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit

__all__ = ["DECISIONS", "WINDOW", "HL_BUDGET", "DEFAULT_CALIBRATION", "check_decision", "corrected_scores",
           "fit_calibration", "update_state", "decision_margin", "decide", "margin_probability", "margin_log_odds",
           "clean_probability"]

#: Rule name -> one-line description.
DECISIONS = {
    "paper": "scores > 0, the paper's fixed threshold (reproduction)",
    "bayes": "noise-corrected probability > 1/2: scores > rho_neg - rho_pos per label",
    "topk": "per instance the round(running clean cardinality) labels of largest corrected score",
    "prevalence": "per-label score quantile matching the running clean prevalence",
    "f1": "one corrected-score threshold maximising micro-F1 estimated from the noisy labels",
    "f1-bounded": "as f1, predicting at most the estimated number of clean positives (with estimated rates and "
                  "a trusted sample: the top entries, as many as the trusted cardinality estimate; without one, with "
                  "rho_- pinned near 0 and rho_+ not pinned: the same rule at rates 0)",
    "f1-bounded-rates": "f1-bounded reading the estimated rates' counts even with a trusted sample (before issue 39)",
    "f1-budget": "as f1, with the estimated Hamming loss at most HL_BUDGET x the all-negative one",
    "hamming": "one corrected-score threshold minimising the Hamming loss estimated from the noisy labels",
}
#: Chunks over which the running state averages (then an exponential average with weight 1/WINDOW).
WINDOW = 5
#: ``"f1-budget"``: the largest estimated Hamming loss allowed, as a multiple of the all-negative one.
HL_BUDGET = 1.5
#: ``(a, b)`` of the calibration ``sigmoid(a u + b)`` before any is fitted (a decision state from before
#: calibrations were kept): ``p(1/2) = 1/2`` with the slope of the identity there.
DEFAULT_CALIBRATION = (4.0, -2.0)
#: Bounds of the fitted slope ``a`` (> 0: margins keep the order of the scores; see fit_calibration) and
#: intercept ``b``.
_SLOPE_BOUNDS = (1e-3, 30.0)
_INTERCEPT_BOUNDS = (-30.0, 30.0)
#: Entries a calibration is fitted on at most (a fixed random subset beyond): bounds its cost per chunk.
_CALIBRATION_ENTRIES = 5_000


def check_decision(value) -> str:
    """``value`` if it names a rule of :data:`DECISIONS`, else a ValueError naming ``decision``."""
    if not isinstance(value, str) or value not in DECISIONS:
        raise ValueError(f"decision must be one of {list(DECISIONS)}; got {value!r}")
    return value


def corrected_scores(scores, rho_pos, rho_neg) -> np.ndarray:
    """``u = ((o + 1) / 2 - rho_-) / (1 - rho_+ - rho_-)`` per label: scores on the clean-probability scale."""
    S = np.asarray(scores, dtype=np.float64)
    rho_pos = np.asarray(rho_pos, dtype=np.float64)
    rho_neg = np.asarray(rho_neg, dtype=np.float64)
    return ((S + 1.0) / 2.0 - rho_neg) / (1.0 - rho_pos - rho_neg)


def fit_calibration(U, Y01, rho_pos, rho_neg, start=DEFAULT_CALIBRATION) -> tuple[float, float]:
    """``(a, b)`` maximising the likelihood of the noisy labels ``Y01`` under the flip model with
    ``P(g = 1 | x) = sigmoid(a u + b)``: ``P(y = 1 | x) = rho_- + (1 - rho_+ - rho_-) sigmoid(a u + b)``.

    ``U`` (N, q): corrected scores; the rates per label.  Fisher scoring from ``start`` with step
    halving, on Platt's smoothed targets (``(N+ + 1) / (N+ + 2)`` for a positive, ``1 / (N- + 2)`` for a
    negative: finite even on separable scores).  ``a`` is kept in [1e-3, 30]: positive, so the calibration
    keeps the order of the scores, and at most 30, since a steeper map would read odds of 20:1 into a
    difference of 0.1 on the probability scale (what in-sample scores of a small chunk suggest, not what
    noisy labels support); ``b`` in [-30, 30].  Calibrated when the rates are right and the scores'
    relation to ``P(g = 1 | x)`` is logistic; fitted on at most 5,000 entries (a fixed random subset: two parameters).

    >>> rng = np.random.default_rng(0)
    >>> u = rng.normal(0.3, 0.3, (4000, 2)); p = 1 / (1 + np.exp(-(6 * u - 2)))
    >>> g = rng.random(u.shape) < p
    >>> y = np.where(g, rng.random(u.shape) >= 0.1, rng.random(u.shape) < 0.3)   # rho_+ 0.1, rho_- 0.3
    >>> a, b = fit_calibration(u, y, [0.1, 0.1], [0.3, 0.3])
    >>> bool(abs(a - 6) < 1.0 and abs(b + 2) < 0.4)
    True
    """
    U = np.asarray(U, dtype=np.float64)
    Y = np.asarray(Y01, dtype=np.float64)
    q = U.shape[1]
    low = np.broadcast_to(np.asarray(rho_neg, dtype=np.float64), (q,))
    d = 1.0 - np.broadcast_to(np.asarray(rho_pos, dtype=np.float64), (q,)) - low
    u, y = U.ravel(), Y.ravel()
    low, d = np.tile(low, U.shape[0]), np.tile(d, U.shape[0])
    if u.size > _CALIBRATION_ENTRIES:
        # a fixed random subset (an even stride could fall on one label column every time)
        take = np.sort(np.random.default_rng(0).choice(u.size, _CALIBRATION_ENTRIES, replace=False))
        u, y, low, d = u[take], y[take], low[take], d[take]
    keep = np.isfinite(u)
    u, y, low, d = u[keep], y[keep], low[keep], d[keep]
    if u.size == 0:
        return float(start[0]), float(start[1])
    # Platt's smoothed targets: separable scores (in-sample, small chunks) would drive the slope to infinity.
    n_pos = float(y.sum())
    y = np.where(y > 0.5, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (y.size - n_pos + 2.0))
    eps = 1e-12

    def clamp(theta):
        return np.array([np.clip(theta[0], *_SLOPE_BOUNDS), np.clip(theta[1], *_INTERCEPT_BOUNDS)])

    def nll(theta):
        pi = np.clip(low + d * expit(theta[0] * u + theta[1]), eps, 1.0 - eps)
        return -float(np.sum(y * np.log(pi) + (1.0 - y) * np.log1p(-pi)))

    theta = clamp(np.asarray(start, dtype=np.float64))
    current = nll(theta)
    for _ in range(30):
        sig = expit(theta[0] * u + theta[1])
        pi = np.clip(low + d * sig, eps, 1.0 - eps)
        dpi = d * sig * (1.0 - sig)  # d pi / d z
        var = pi * (1.0 - pi)
        r = (y - pi) * dpi / var
        w = dpi * dpi / var
        grad = np.array([np.sum(r * u), np.sum(r)])
        info = np.array([[np.sum(w * u * u), np.sum(w * u)], [np.sum(w * u), np.sum(w)]])
        try:
            step = np.linalg.solve(info + 1e-9 * np.eye(2), grad)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while t > 1e-4:
            trial = clamp(theta + t * step)
            value = nll(trial)
            if value <= current:
                break
            t /= 2.0
        else:
            break
        converged = abs(current - value) <= 1e-9 * max(1.0, abs(current))
        theta, current = trial, value
        if converged:
            break
    return float(theta[0]), float(theta[1])


def _prevalence_thresholds(S, prevalence) -> np.ndarray:
    """Per label the score above which a share ``prevalence_j`` of the chunk lies."""
    n = S.shape[0]
    ordered = -np.sort(-S, axis=0)  # descending per column
    m = np.clip(np.rint(np.asarray(prevalence) * n).astype(int), 0, n)
    top = ordered[np.maximum(m - 1, 0), np.arange(S.shape[1])]  # the m-th largest
    below = ordered[np.minimum(m, n - 1), np.arange(S.shape[1])]  # the (m+1)-th largest
    thr = np.where(m >= n, ordered[-1] - 1e-12, (top + below) / 2.0)
    return np.where(m == 0, ordered[0], thr)  # m = 0: above every score (strict >)


def _descending(u) -> np.ndarray:
    """The order of ``u`` from largest to smallest, equal entries in their own order (a stable sort's): the
    unstable sort (faster), then each run of equal entries put back in their own order (a label whose scores are all
    equal makes long runs)."""
    order = np.argsort(-u)
    ranked = u[order]
    same = ranked[1:] == ranked[:-1]
    if same.any():
        tied = np.zeros(u.size, dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
        run = np.cumsum(np.concatenate(([True], ~same)))  # the run of equal entries of each place
        at = np.flatnonzero(tied)
        order[at] = order[at][np.lexsort((order[at], run[at]))]
    return order


def _count_thresholds(U, C, bound=None) -> tuple[float, float, float, float]:
    """``(tau_f1, tau_f1_bounded, tau_f1_budget, tau_hamming)`` on the corrected scale (module doc);
    ``bound``: the most positives ``"f1-bounded"`` may predict (default: the estimated clean positives)."""
    u = U.ravel()
    c = C.ravel()
    order = _descending(u)
    u, c = u[order], c[order]
    positives = max(float(c.sum()), 1.0)
    tp = np.cumsum(c)
    m = np.arange(1, u.size + 1)
    f1 = 2.0 * tp / (m + positives)

    def tau(best):  # predict the top best + 1 entries: u > midpoint to the next one
        if f1[best] <= 0:
            return float(u[0])  # nothing worth predicting
        nxt = u[best + 1] if best + 1 < u.size else u[best] - 1.0
        return float((u[best] + nxt) / 2.0)

    best = int(np.argmax(f1))
    allowed = int(min(np.floor(positives if bound is None else max(bound, positives)), u.size))
    best_bounded = int(np.argmax(f1[:allowed])) if allowed >= 1 else 0
    gain = 2.0 * tp - m  # all-negative HL count minus the estimated HL count of the top m
    best_hl = int(np.argmax(gain))
    tau_hl = tau(best_hl) if gain[best_hl] > 0 else float(u[0])
    within = (m + positives - 2.0 * tp) <= HL_BUDGET * positives
    best_budget = int(np.argmax(np.where(within, f1, -np.inf))) if within.any() else -1
    tau_budget = tau(best_budget) if best_budget >= 0 else float(u[0])
    return tau(best), (tau(best_bounded) if allowed >= 1 else float(u[0])), tau_budget, tau_hl


def _count_threshold(U, count: int) -> float:
    """The threshold on ``U`` halfway between its ``count``-th and ``count + 1``-th largest entries (above every
    entry for ``count`` 0, below every one for all of them)."""
    u = np.sort(U.ravel())[::-1]
    if count <= 0:
        return float(u[0])
    if count >= u.size:
        return float(u[-1] - 1.0)
    return float((u[count - 1] + u[count]) / 2.0)


def update_state(state, scores, Y01, rho_pos, rho_neg, *, cardinality, prevalence, rates_estimated=False,
                 cardinality_identified=False, calibrate=True, rates_free=False) -> dict:
    """The running state after one chunk; ``state`` None starts afresh (first chunk, or after a drift reset).

    ``scores`` (N, q): the chunk's scores (the model's prequential ones, see the module doc);
    ``Y01`` its observed labels; ``rho_pos, rho_neg`` the chunk's rates (given or estimated);
    ``cardinality`` and ``prevalence`` its moment estimates (:mod:`ncld_core.cardinality`).
    ``rates_estimated``: the rates are the online estimates, whose ``rho_-`` is only an upper bound where
    a label has no anchors (:mod:`ncld_core.model.flip_rates`). ``"f1-bounded"`` then bounds its
    predicted positives by the most clean positives the rates allow, ``sum (y / (1 - rho_+))`` (``rho_-``
    = 0), not by the count at the estimated ``rho_-``: biased up, that count shrank the bound and with it
    micro-F1 (``docs/flip-rates.md``).
    ``cardinality_identified``: with ``rates_estimated``, ``cardinality`` is pinned down without the rates (a
    trusted sample's regression estimate, or the mean of its first few rows); ``"f1-bounded"`` then predicts the chunk's top ``round(cardinality
    N)`` entries by ``u`` (the module doc), ``"f1-bounded-rates"`` keeps the counts of the estimated rates.
    Without it, ``"f1-bounded"`` predicts at least that many, or, if larger, the plug-in cardinality with each
    label's ``rho_-`` capped at the labels' upper quartile (the anchor estimate of ``rho_-`` errs upward, most on
    frequent labels, and an upward ``rho_-`` shrinks the plug-in cardinality).  With
    ``rates_estimated`` the ``"f1-bounded"`` threshold is the latest chunk's, not a running average: the
    estimated rates, and with them the scale of ``u``, move from chunk to chunk, and an average dragged the
    first chunk's in-sample threshold along.
    ``rates_free``: with ``rates_estimated``, the rates pin nothing the correction needs (module doc,
    ``"f1-bounded"``): that rule then predicts by the threshold it would have at rates 0, kept beside the
    others (a running average, as with given rates) whatever ``rates_free`` says.
    ``calibrate``: fit the calibration of the probabilities (:func:`fit_calibration`) on this chunk; without
    it the state keeps its calibration (a sweep that only counts predictions: their sign does not depend on
    it).  Pure: ``state`` is not modified.
    """
    S = np.asarray(scores, dtype=np.float64)
    Y = np.asarray(Y01, dtype=np.float64)
    if S.ndim != 2 or S.shape != Y.shape or S.shape[0] < 1:
        raise ValueError(f"scores {S.shape} and labels {Y.shape} must be the same (N, q), N >= 1")
    q = S.shape[1]
    rho_pos = np.broadcast_to(np.asarray(rho_pos, dtype=np.float64), (q,)).copy()
    rho_neg = np.broadcast_to(np.asarray(rho_neg, dtype=np.float64), (q,)).copy()
    prevalence = np.clip(np.broadcast_to(np.asarray(prevalence, dtype=np.float64), (q,)), 0.0, 1.0)
    cardinality = float(np.clip(cardinality, 0.0, q))
    if not (np.all(np.isfinite(S)) and np.all(np.isfinite(prevalence)) and np.isfinite(cardinality)):
        raise ValueError("decision state: scores, prevalence and cardinality must be finite")
    n = 1 if state is None else int(state["n_chunks"]) + 1
    w = 1.0 / min(n, WINDOW)

    def run(key, value):
        return value if state is None else (1.0 - w) * state[key] + w * value

    prevalence_run = run("prevalence", prevalence)
    U = corrected_scores(S, rho_pos, rho_neg)
    C = (Y - rho_neg) / (1.0 - rho_pos - rho_neg)  # unbiased clean-label counts per entry
    bound = float((Y / (1.0 - rho_pos)).sum()) if rates_estimated else None  # the identified set's largest count
    tau, tau_bounded, tau_budget, tau_hl = _count_thresholds(U, C, bound)
    tau_free = _count_thresholds((S + 1.0) / 2.0, Y)[1]  # rates 0: the noisy scale, the observed labels as counts
    tau_rates = tau_bounded
    if rates_estimated:
        floor = cardinality
        if not cardinality_identified:  # the plug-in with rho_- capped at the labels' upper quartile (docstring)
            capped = np.minimum(rho_neg, np.quantile(rho_neg, 0.75))
            floor = max(cardinality, float(np.clip((Y.mean(axis=0) - capped) / (1.0 - rho_pos - capped), 0, 1).sum()))
        at_cardinality = _count_threshold(U, int(round(floor * S.shape[0])))
        tau_bounded = at_cardinality if cardinality_identified else min(tau_bounded, at_cardinality)
    previous = DEFAULT_CALIBRATION if state is None else _calibration(state)
    slope, intercept = fit_calibration(U, Y, rho_pos, rho_neg, start=previous) if calibrate else previous
    return {
        "n_chunks": n,
        "rho_pos": rho_pos,
        "rho_neg": rho_neg,
        "cardinality": float(run("cardinality", cardinality)),
        "prevalence": np.asarray(prevalence_run, dtype=np.float64),
        "label_thresholds": np.asarray(run("label_thresholds", _prevalence_thresholds(S, prevalence_run)),
                                       dtype=np.float64),
        "f1_threshold": float(run("f1_threshold", tau)),
        "f1_bounded_threshold": float(tau_bounded if rates_estimated else run("f1_bounded_threshold", tau_bounded)),
        "f1_bounded_rates_threshold": float(tau_rates if state is None else (1.0 - w) * state.get(
            "f1_bounded_rates_threshold", state["f1_bounded_threshold"]) + w * tau_rates),
        "rates_free_threshold": float(tau_free if state is None or "rates_free_threshold" not in state
                                      else (1.0 - w) * state["rates_free_threshold"] + w * tau_free),
        "rates_free": float(bool(rates_free and rates_estimated)),
        "f1_budget_threshold": float(run("f1_budget_threshold", tau_budget)),
        "hamming_threshold": float(run("hamming_threshold", tau_hl)),
        "calibration_slope": float(slope if state is None else (1.0 - w) * previous[0] + w * slope),
        "calibration_intercept": float(intercept if state is None else (1.0 - w) * previous[1] + w * intercept),
    }


def _calibration(state) -> tuple[float, float]:
    """``(a, b)`` of a state (:data:`DEFAULT_CALIBRATION` for a state from before calibrations were kept)."""
    if state is None or "calibration_slope" not in state:
        return DEFAULT_CALIBRATION
    return float(state["calibration_slope"]), float(state["calibration_intercept"])


def _as_2d(scores):
    S = np.asarray(scores, dtype=np.float64)
    return S, (S[:, None] if S.ndim == 1 else S)


def _check_state(rule, state, S2):
    if state is None:
        raise ValueError(f"decision={rule!r} needs the model's decision state; fit the model first")
    if S2.shape[1] != np.shape(state["prevalence"])[0]:
        raise ValueError(f"scores have {S2.shape[1]} labels, the decision state {np.shape(state['prevalence'])[0]}")


def decision_margin(rule, state, scores) -> np.ndarray:
    """``a (u - tau)``: the log-odds margin of the rule ``rule`` (module doc), positive exactly where it
    predicts, of the shape of ``scores`` ((N, q), or (N,) for one label).

    Each form keeps the sign of the rule's own comparison exactly (``o > 0`` is ``a o / (2 d) > 0``,
    ``u > tau`` is ``a (u - tau) > 0``).  ``"topk"``: ``tau`` per instance halfway between the k-th and
    the (k+1)-th largest ``u``, so entries tied at that boundary are not predicted.
    """
    check_decision(rule)
    S, S2 = _as_2d(scores)
    if rule == "paper" and state is None:  # threshold 0 needs no state: the default slope and rates 0
        a, d = DEFAULT_CALIBRATION[0], np.ones(S2.shape[1])
        M = a * S2 / (2.0 * d)
        return M[:, 0] if S.ndim == 1 else M
    _check_state(rule, state, S2)
    a, _ = _calibration(state)
    d = 1.0 - np.asarray(state["rho_pos"], dtype=np.float64) - np.asarray(state["rho_neg"], dtype=np.float64)
    U = corrected_scores(S2, state["rho_pos"], state["rho_neg"])
    if rule == "paper":
        M = a * S2 / (2.0 * d)  # u - tau_paper = o / (2 d)
    elif rule == "prevalence":
        M = a * (S2 - state["label_thresholds"]) / (2.0 * d)
    elif rule == "topk":
        k = int(np.clip(np.rint(state["cardinality"]), 0, S2.shape[1]))
        ordered = -np.sort(-U, axis=1)
        if k == 0:
            tau = ordered[:, 0] + 1.0
        elif k == S2.shape[1]:
            tau = ordered[:, -1] - 1.0
        else:
            tau = (ordered[:, k - 1] + ordered[:, k]) / 2.0
        M = a * (U - tau[:, None])
    elif rule == "f1-bounded" and state.get("rates_free", 0.0):
        M = a * ((S2 + 1.0) / 2.0 - float(state["rates_free_threshold"]))  # at rates 0 (update_state)
    else:
        key = {"bayes": None, "f1": "f1_threshold", "f1-bounded": "f1_bounded_threshold",
               "f1-bounded-rates": "f1_bounded_rates_threshold",
               "f1-budget": "f1_budget_threshold", "hamming": "hamming_threshold"}[rule]
        # a state from before "f1-bounded-rates" existed held its threshold as "f1-bounded"'s
        tau = 0.5 if key is None else float(state.get(key, state.get("f1_bounded_threshold", 0.5)))
        M = a * (U - tau)
    return M[:, 0] if S.ndim == 1 else M


def decide(rule, state, scores) -> np.ndarray:
    """0/1 predictions, int8 of the shape of ``scores`` ((N, q), or (N,) for one label), by ``rule``:
    ``decision_margin(rule, state, scores) > 0``."""
    return (decision_margin(rule, state, scores) > 0).astype(np.int8)


#: Log-odds beyond which probabilities are compressed (odds above e^20, 5e8 to 1): float64 cannot tell
#: sigmoid(37) from 1, so a plain sigmoid would tie entries whose margins differ.
_LOGIT_TAIL = 20.0


def _logistic(z) -> np.ndarray:
    """``sigmoid(z)`` with the tails beyond ``|z| = 20`` compressed to ``20 + 2.4 log(1 + log(1 + |z| - 20))``
    (at most 35.7 for any float): strictly inside (0, 1) and in the order of ``z`` (no ties where float64
    would round to 0 or 1; the probabilities changed are all beyond 1 - 2e-9 or below 2e-9), and above 1/2
    exactly where ``z > 0``."""
    z = np.asarray(z, dtype=np.float64)
    over = np.maximum(np.abs(z) - _LOGIT_TAIL, 0.0)
    z = np.where(over > 0, np.sign(z) * (_LOGIT_TAIL + 2.4 * np.log1p(np.log1p(over))), z)
    p = expit(z)
    # above 1/2 exactly where z > 0: a margin too small to move float64's sigmoid off 1/2 is still a prediction
    return np.where(z > 0, np.maximum(p, np.nextafter(0.5, 1.0)), p)


def margin_probability(margin) -> np.ndarray:
    """``sigmoid(margin)`` (tails compressed, :func:`_logistic`): the rule-weighted probability of
    relevance, 1/2 at the threshold, in the order of the margin."""
    return _logistic(margin)


def margin_log_odds(margin) -> np.ndarray:
    """``logit(margin_probability(margin))``: the margin read back from its probability, what
    ``ELMNCLD.decision_function`` returns.  Equal to the margin up to rounding where ``|margin| <= 20``,
    compressed beyond as :func:`_logistic` compresses it, positive exactly where the margin is; the
    probability's ties are ties here (float64 cannot keep margins of 54.05273 and 54.05275 apart as
    probabilities, so the margin itself would rank them where ``predict_proba`` ties them).

    >>> m = margin_log_odds(np.array([-3.0, 0.0, 1e-300, 54.05273391116181, 54.05275392147157]))
    >>> [round(float(v), 6) for v in m[:2]], bool(m[2] > 0), bool(m[3] == m[4])
    ([-3.0, 0.0], True, True)
    """
    return logit(_logistic(margin))


def clean_probability(state, scores) -> np.ndarray:
    """``sigmoid(a u + b)``: the calibrated estimate of ``P(g = 1 | x)`` (clean label) from ``scores``,
    of their shape; needs a fitted decision state (its rates and calibration)."""
    S, S2 = _as_2d(scores)
    _check_state("bayes", state, S2)
    a, b = _calibration(state)
    P = _logistic(a * corrected_scores(S2, state["rho_pos"], state["rho_neg"]) + b)
    return P[:, 0] if S.ndim == 1 else P
