"""ELM-NCLD: online multi-label classification under noisy and changing label distributions.

The model minimises, over everything seen since the last reset, the objective of
Eq. (N3) with ``O_i = H_i Phi`` per chunk::

    sum_i  b/2 ||O_i - Y_i||^2 + (1-b)/2 ||O_i - S_i O_i||^2 + g Tr(A_i^T O_i)  +  a/2 ||Phi||^2

Its exact normal equations (NOTES §1; the paper's Eq. (Gra) drops a ``(1-b) I``
term) are ``K Phi = B_score - B_rank`` with the sufficient statistics (NOTES §2)::

    K       = a I + sum_i H_i^T R_i H_i,     R_i = b I + (1-b) (I - S_i)^T (I - S_i)
    B_score = sum_i b H_i^T Y_i,             B_rank = sum_i g H_i^T A_i

``H_i^T R_i H_i = b H_i^T H_i + (1-b) E_i^T E_i`` with ``E_i = H_i - S_i H_i`` is a
sum of positive semi-definite terms, so ``K`` is positive definite for every
``b`` in [0, 1] and ``a > 0``; it is solved by Cholesky, once per chunk, at
O(L^3).  Nothing of size N x N is inverted: ``S_i`` is sparse with ``K`` entries
per row.  The result is exactly the batch solution of Eq. (Gra0) on all chunks
seen (with ``S`` block diagonal, as the paper states).

``Psi = K^-1 B_score`` is the solution without the ranking term (Eq. N2), the
model the "adjust" strategy falls back to; the paper's ``Z = Psi - Phi`` is
``K^-1 B_rank``.

Cardinality (Eq. card): each chunk's label cardinality is estimated from its noisy
labels by the moment identity (:mod:`ncld_core.model.cardinality`): unbiased when the
rates are right, with a standard error and a 95 % interval; the paper's
importance-weighted form (clipped weights, ``P_D`` fitted on the same chunk) is
recorded beside it as ``lcard_paper`` and is biased upwards (``docs/drift.md``).

Drift: a detector (:mod:`ncld_core.model.detector`, ``detector=``) reads the chunk's
per-instance cardinalities and label counts; ``detector="paper"`` is Eq. (Hfd) as
published.  ``monitors`` run other detectors beside it, recorded but not acted on.
When the acting detector fires:

* ``strategy="retrain"`` (ELM-I): ``K, B_score, B_rank`` restart from the current chunk alone;
* ``strategy="adjust"`` (ELM-II): ``B_rank`` is dropped (``Phi_{i-1} := Psi_{i-1}``),
  ``K`` and ``B_score`` are kept, then the current chunk is added;
* ``strategy="none"`` (ELM-O): the firing is recorded and nothing changes.

Flip rates (Eq. NR): given as ``rho_pos`` / ``rho_neg``, or, when neither is given
(``flip_rates="auto"``, the default) or with ``flip_rates="estimate"``, estimated
online from the stream by :class:`~ncld_core.model.flip_rates.FlipRateEstimator`: each
chunk updates the estimates first (ranking the chunk by the model's prequential
scores ``H Phi``, computed before the chunk is learnt), then its importance weights
use them.  A drift
acted on (retrain / adjust) also down-weights the estimator's accumulated statistics
(:meth:`~ncld_core.model.flip_rates.FlipRateEstimator.after_drift`).  The noisy labels alone bound the
rates (``rho_+`` only from above): the cardinality's interval is then the identified set of those bounds,
and the record says so (``lcard_identified``, ``rates_identified``).  A trusted sample, rows whose clean
labels a user has checked (``partial_fit(X, Y, trusted=mask, Y_trusted=clean)``), gives direct counts of
the flips and an estimate of the cardinality with a confidence interval (:mod:`ncld_core.model.cardinality`:
the trusted rows' regression, restarted when the detector fires, acted on or not; after a change, the rates
the trusted rows count); the model still learns every row from its observed labels.

Loss (``loss=``, :mod:`ncld_core.model.noisy_targets`): with given rates the score term regresses, by
default, the backward-corrected targets ``(y - rho_-) / (1 - rho_+ - rho_-)`` (unbiased for the clean
label; the paper regresses the noisy labels, ``loss="paper"``, which the default keeps with estimated rates unless
a trusted sample comes from the first chunk on: then the forward loss).  The scores ``H Phi`` then estimate the clean
probability on the {-1, +1} scale; the decision rules, written for regressions of the noisy labels,
read them mapped back through Eq. (NR) (:func:`~ncld_core.model.noisy_targets.noisy_scale`).

Decisions (``decision=``, :mod:`ncld_core.model.decision`): ``"paper"`` predicts ``H Phi > 0``; the
other rules read the scores on the noise-corrected scale and keep a running state of the
clean cardinality, prevalences and thresholds (:attr:`decision_state_`), updated with each
chunk learnt and restarted by a drift acted on.  With estimated rates the default ``"f1-bounded"``
predicts at least the top ``round(c N)`` entries of a chunk, ``c`` the cardinality estimate, and with a
trusted sample (whose regression estimate of ``c`` needs no rates) exactly that many: per-label rates the
noisy labels do not identify no longer decide how many labels are predicted (issue 39).

``hessian="paper"`` reproduces the published form ``R = b I + (1-b)(S^T S - S^T - S)``.
For ``b > 1/2`` it equals the exact form at ``b' = (2b-1)/b``, ``g' = g(2b-1)/b^2``,
``a' = a/b`` (same predictions); for ``b <= 1/2`` its ``K`` is indefinite and
the model refuses it.

:class:`ELMNCLD` is a scikit-learn multi-label classifier
(:class:`~ncld_core.sklearn_compat.ChunkClassifier`: ``clone``, ``cross_val_score``,
``GridSearchCV``, ``Pipeline``; ``score`` is the subset accuracy) and runs in River through
:class:`~ncld_core.river_compat.RiverMultiLabelClassifier`.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 5)); Y = (X[:, :3] > 0).astype(int)
>>> model = ELMNCLD(random_state=0)
>>> for start in range(0, 300, 100):
...     model = model.partial_fit(X[start:start + 100], Y[start:start + 100])
>>> model.predict(X[:2]).shape
(2, 3)
>>> list(model.history_["action"])
['init', 'none', 'none']
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import time

import numpy as np
import pandas as pd

from ..saved_state import (
    COUNT,
    FITTED_INPUTS,
    INT,
    NPY_KINDS,
    PLAIN,
    POSITIVE,
    RATE,
    STR,
    SavedState,
    Spec,
    StoredRecord,
    ValueRange,
    array,
    dict_of,
    first_error,
    instance_of,
    list_of,
    number,
    optional,
    probe_decision,
    shape_error,
)
from ..validation import Range, check_flip_rates, check_in_range, check_random_state
from ..sklearn_compat import ChunkClassifier
from ..threads import check_n_threads, limited
from .capacity import (
    ALPHA_DISCOUNT,
    alpha_criterion,
    alpha_grid,
    label_weights,
    prequential_ap_losses,
    prequential_losses,
    start_alpha,
)
from .cardinality import moment_cardinality
from .chunk_terms import ChunkTerms
from .cost import check_budget
from .decision import (check_decision, clean_probability, decide, decision_margin, margin_log_odds, margin_probability,
                       update_state)
from .detector import DETECTORS, ChunkSignal, make_detector
from .elm import RandomHiddenLayer
from .flip_rates import FlipRateEstimator, check_trusted
from .graph import gram_matrix, reconstruction_weights
from .importance import importance_weights, instance_cardinality, ranking_matrix
from .noise_shrinkage import SHRINKABLE_LOSSES, flip_noise_variance, shrink_output
from .noisy_targets import (check_loss, noise_free_probability, noisy_scale, regression_targets, resolve_loss,
                            ridge_scale)
from .probability import DEFAULT_PROBABILITY_MODEL, make_probability_model
from .record import HISTORY_COLUMNS, ModelChunkRecord, MonitorResult
from .ridge import solve_ridge
from .statistics import SufficientStatistics, accumulate, drift_action

__all__ = ["ELMNCLD", "HISTORY_COLUMNS"]

STRATEGIES = ("none", "retrain", "adjust")
FLIP_RATE_MODES = ("auto", "given", "estimate")
HESSIANS = ("exact", "paper")

#: The allowed values of the numeric parameters, declared once: :meth:`ELMNCLD._validate_params`
#: checks them and :meth:`ncld_core.config.RunConfig.errors` shows the same messages.
PARAM_RANGES = {
    "n_hidden": Range(1, 100_000, integer=True),
    "alpha": Range(0, np.inf, low_open=True, high_open=True),
    "beta": Range(0, 1),
    "gamma": Range(0, np.inf, high_open=True),
    "delta": Range(0, 1, low_open=True, high_open=True),
    "n_neighbors": Range(1, 100_000, integer=True),
    "graph_reg": Range(0, 1),
    "shrinkage": Range(0, 10),
}


def _hidden(hidden, Xs, cache=None) -> np.ndarray:
    """``H`` of the scaled chunk ``Xs``; with a :class:`~ncld_core.model.chunk_cache.ChunkCache`, the one every model
    scoring and learning the chunk with the same hidden layer shares (one key for both)."""
    def compute():
        return hidden.transform(Xs, scaled=True)

    return compute() if cache is None else cache.get(("H", cache.layer_key(hidden)), compute)


def _cardinality(Y01, rho_pos, rho_neg, estimator):
    """The chunk's cardinality estimate (:mod:`ncld_core.model.cardinality`): with given rates the moment
    estimate and its confidence interval; with estimated ones the interval of the rates' bounds, or, with
    a trusted sample, the regression estimate or the counted-rates one (:mod:`ncld_core.model.cardinality`)."""
    if estimator is None:
        return moment_cardinality(Y01, rho_pos, rho_neg)
    return moment_cardinality(Y01, rho_pos, rho_neg, rate_intervals=estimator.rate_intervals_,
                              identified=bool(estimator.identified_.all()), trusted=estimator.trusted_sample(),
                              counts=getattr(estimator, "trusted_counts_", None))


def _pinned_by_trusted_rows(estimator, cardinality) -> bool:
    """Whether a chunk's cardinality estimate comes from trusted rows, so the decision counts with it and not with
    the estimated rates: the rates are estimated and trusted rows stand behind the estimate (their regression, or,
    with fewer than :data:`~ncld_core.model.cardinality.MIN_TRUSTED` of them, their plain mean: unbiased, noisy;
    counting with it measured better than with the rates' floor on short streams, ``docs/rates-unknown.md``).

    >>> from types import SimpleNamespace as C
    >>> _pinned_by_trusted_rows(object(), C(n_trusted=5)), _pinned_by_trusted_rows(object(), C(n_trusted=0))
    (True, False)
    >>> _pinned_by_trusted_rows(None, C(n_trusted=40))      # rates told
    False
    """
    return estimator is not None and cardinality.n_trusted > 0


#: Share of the labels whose ``rho_-`` must be bounded near 0 for the decision to fall back to the rates-free rule
#: (:func:`_rates_free`): most, not all (a frequent label's low scores hold clean positives, which lift its bound).
RATES_FREE_SHARE = 0.9


def _labels_look_missing(estimator) -> bool:
    """Whether the noisy labels look like missing labels, not flips: ``rho_-``'s upper bound is near 0 (at most the
    estimator's ``identified_width``) on at least :data:`RATES_FREE_SHARE` of the labels and ``rho_+`` is not
    identified on every label, so a correction would rest on the rate the noisy labels do not pin down.

    >>> from types import SimpleNamespace as E
    >>> import numpy as np
    >>> missing = E(rho_neg_high_=np.array([0.03, 0.05]), identified_width=0.1,
    ...             rho_pos_identified_=np.array([False, True]))
    >>> flips = E(**{**vars(missing), "rho_neg_high_": np.array([0.03, 0.35])})
    >>> _labels_look_missing(missing), _labels_look_missing(flips)
    (True, False)
    """
    near_zero = float(np.mean(estimator.rho_neg_high_ <= estimator.identified_width))
    return bool(near_zero >= RATES_FREE_SHARE and not np.all(estimator.rho_pos_identified_))


def _rates_free(estimator, cardinality, loss: str) -> bool:
    """Whether the decision falls back to the rule that needs no rates (:func:`update_state`'s ``rates_free``):
    the rates are estimated, the labels look missing (:func:`_labels_look_missing`), and either no trusted row pins
    the cardinality down or the model regresses the noisy labels (``loss`` "paper": its scores are on the noisy
    scale, where the rates-free threshold is read).  With trusted rows and a corrected loss the count they vouch for
    decides (it scored higher, ``docs/rates-unknown.md``).

    >>> from types import SimpleNamespace as E
    >>> import numpy as np
    >>> missing = E(rho_neg_high_=np.array([0.03, 0.05]), identified_width=0.1,
    ...             rho_pos_identified_=np.array([False, True]))
    >>> blind, checked = E(n_trusted=0), E(n_trusted=12)
    >>> _rates_free(missing, blind, "paper"), _rates_free(missing, checked, "forward")
    (True, False)
    >>> _rates_free(None, blind, "paper")
    False
    >>> _rates_free(missing, checked, "paper")
    True
    """
    if estimator is None or (_pinned_by_trusted_rows(estimator, cardinality) and loss != "paper"):
        return False
    return _labels_look_missing(estimator)


def _whole_data_cardinality(Y01, rho_pos, rho_neg, estimator, loss: str) -> dict:
    """Cardinality and prevalences of all of ``fit``'s data, and what the decision state is told of them (the
    rates estimated; the cardinality pinned down by trusted rows), as :func:`update_state` takes them."""
    est = _cardinality(Y01, rho_pos, rho_neg, estimator)
    return {"cardinality": est.estimate, "prevalence": est.prevalence, "rates_estimated": estimator is not None,
            "cardinality_identified": _pinned_by_trusted_rows(estimator, est),
            "rates_free": _rates_free(estimator, est, loss)}


def _rate_bounds(estimator) -> dict:
    """The record's per-label rate intervals and identified share (given rates: none, all identified)."""
    if estimator is None:
        return {"rates_identified": 1.0}
    names = ("rho_pos_low", "rho_pos_high", "rho_neg_low", "rho_neg_high")
    return {**{name: _floats(v) for name, v in zip(names, estimator.rate_intervals_)},
            "rates_identified": float(estimator.identified_.mean())}


def _floats(values) -> tuple:
    """A per-label array as the tuple of floats a record holds."""
    return tuple(float(v) for v in values)


def _residual_gram(H, S):
    """``E^T E`` with ``E = H - S H``, the graph term of ``H^T R H`` (NOTES §1-2)."""
    E = H - S @ H
    return E.T @ E


class ELMNCLD(ChunkClassifier):
    """ELM-NCLD with the exact objective, sufficient statistics and drift adaptation.

    Parameters
    ----------
    n_hidden : int, default 300
        ``L``, hidden nodes of the random ELM layer (Eq. ELM).  Why 300 and not the paper's 20 (AP
        against throughput, measured): ``docs/capacity.md`` (``python -m benchmarks.capacity``).  A chunk whose estimated
        memory (:func:`ncld_core.capacity.estimate_cost`, also ``ncld_core.model.estimate_cost``)
        passes :data:`ncld_core.capacity.MEMORY_BUDGET_BYTES` is refused before any work.
    alpha : float, "auto" or sequence of floats, default 1.8
        ``a`` > 0, ridge penalty on ``Phi``.  "auto" (the grid
        :data:`ncld_core.capacity.ALPHA_GRID`, 10^-1 ... 10^4 in half decades) or a sequence
        (its own grid): chosen online, each chunk, by the discounted prequential squared loss of
        every grid value's model on the chunks before they were learnt (noise-corrected label
        weights; :mod:`ncld_core.capacity`); ``history_["alpha"]`` records the value used.
    beta : float in [0, 1], default 0.18
        ``b``, weight of fitting the observed labels against agreeing with the
        graph neighbours' scores (Eq. N2).  Every default (beta, gamma, alpha,
        n_neighbors, delta, probability_model) was chosen by measurement on the
        shared datasets: ``docs/defaults.md`` (``python -m benchmarks.choose_defaults``).
    gamma : float >= 0, default 0.005
        ``g``, weight of the importance-weighted ranking term (Eq. RL_New; the paper's "unbiased"
        ranking loss, unbiased only with the true ``P_D`` and unclipped weights).
    delta : float in (0, 1), default 0.05
        Tolerated false-alarm probability per chunk of the drift detectors.
    detector : str, default "adaptive+labels"
        The drift test acted on (:data:`ncld_core.model.detector.DETECTORS`); "paper" is
        Eq. (Hfd) as published.  The default was chosen by ``python -m benchmarks.drift``
        (``docs/drift.md``).
    monitors : tuple of str, default ()
        Further detectors run on the same signal, recorded in :attr:`history_` as
        ``<name>_statistic``, ``<name>_threshold``, ``<name>_fired``; never acted on.
    n_neighbors : int, default 20
        ``K``, neighbours per instance in the chunk's feature graph (Eq. Re).
    strategy : {"none", "retrain", "adjust"}, default "none"
        Drift adaptation: ELM-O, ELM-I, ELM-II.
    rho_pos, rho_neg : None, float or array of shape (q,), default None
        Per-label flip rates (Eq. NR): ``P(y=-1 | g=+1)`` and ``P(y=+1 | g=-1)``.
        ``None`` with the other given means 0.
    flip_rates : {"auto", "given", "estimate"} or FlipRateEstimator, default "auto"
        "given": use ``rho_pos`` / ``rho_neg``; "estimate": estimate them online
        (:mod:`ncld_core.model.flip_rates`; then ``rho_pos`` / ``rho_neg`` must be None);
        "auto": "estimate" when neither rate is given, else "given".  A
        :class:`~ncld_core.model.flip_rates.FlipRateEstimator` instance estimates with its settings.
    probability_model : str or object, default "knn"
        Model of ``P_D(y=+1 | x)`` refitted on each chunk; see :mod:`ncld_core.model.probability`.
        "knn" costs nothing that grows with ``L``; the choice is measured in ``docs/capacity.md``.
    hessian : {"exact", "paper"}, default "exact"
        "paper" reproduces the published Eq. (Gra), only for reproduction.
    decision : str, default "f1-bounded"
        How :meth:`predict` turns scores into labels (:data:`ncld_core.model.decision.DECISIONS`):
        "paper" is the published threshold 0 (it floods sparse label sets); the rules measured side by side,
        and why the default is the default: ``docs/decisions.md`` (``python -m benchmarks.decisions``).
    loss : {"auto", "backward", "forward", "paper", "denoise", "denoise-knn"}, default "auto"
        What the score term of Eq. (N3) regresses (:mod:`ncld_core.model.noisy_targets`; only ``H^T Y`` of the
        sufficient statistics changes).  "backward": the backward-corrected (unbiased) targets
        ``(y - rho_-) / (1 - rho_+ - rho_-)``, so the scores estimate the *clean* probability and labels with
        different rates rank on one scale; "forward", the forward correction (fit the noisy labels through the
        noise): the backward targets with each label's ridge divided by its ``(1 - rho_+ - rho_-)^2``
        (``history_["alpha"]``: the labels' mean); "paper", the observed noisy labels, as published (the noise
        correction then lives only in the ranking term); "denoise", the posterior ``P(clean | noisy, x)`` from
        the model's clean probability before each chunk ("denoise-knn": from the graph neighbours' labels).
        "auto" is "backward" when the rates are given; when they are estimated, "forward" if the first chunk
        came with a trusted sample (``partial_fit(trusted=)``), its labels do not look missing (``rho_-``
        bounded near 0 on most labels and ``rho_+`` not identified on all) and ``alpha`` is a number, else "paper"
        (without trusted rows ``rho_-`` is only an upper bound, and the correction divides its error by
        ``1 - rho_+ - rho_-``; :meth:`loss_in_use`).  With rates 0 all are the same model.  The losses side by side,
        and why "auto" chooses as it does: ``docs/noise-gap.md`` (``python -m benchmarks.noise_gap``); with a
        trusted sample ``docs/rates-unknown.md`` and ``docs/differences.md`` (a higher mean micro-F1, more streams
        below ignoring the noise).
    shrinkage : float in [0, 10], default 0
        After each solve, shrink what the label flips add to the output weights, across labels
        (:mod:`ncld_core.model.noise_shrinkage`: in the label space whitened by what each label's flips are
        expected to add to the fitted values, every direction of them is shrunk by ``max(0, 1 - shrinkage /
        lambda)``; 1 is the Wiener factor).  0 leaves the solve as it is; with rates 0 nothing is shrunk; for
        the losses "backward", "forward" and "paper" only; the beta x gamma sweep
        (:mod:`ncld_core.eval.sweep`) does not shrink.  With ``alpha="auto"`` or a grid, each ridge is scored
        on the solve before shrinking; ``psi_`` is kept unshrunk.  Measured beside the losses, and why 0 is
        the default: ``docs/noise-gap.md``.
    scaling : {"auto", "l2", "standard", "none"}, default "auto"
        Input scaling of the hidden layer; see :class:`~ncld_core.model.elm.RandomHiddenLayer`.
    graph_reg : float, default 1e-6
        Relative Tikhonov term of the graph weights; see :mod:`ncld_core.model.graph`.
    random_state : int or None
        Seed of the hidden layer.
    n_threads : "auto" or int, default "auto"
        BLAS/OpenMP threads for the model's algebra (:mod:`ncld_core.threads`): ``"auto"`` is the
        process's budget (``ncld --threads``, the dashboard), else one thread below 1500 hidden nodes,
        where a second thread costs more than it gains and oversubscribes a busy machine; an integer
        overrides it. Predictions do not depend on it.

    Notes
    -----
    A scikit-learn classifier (:mod:`ncld_core.sklearn_compat`): parameters are set in
    ``__init__`` and read by ``get_params`` / ``clone``; ``fit`` forgets everything and learns
    in batch, ``partial_fit`` continues; ``score`` is the subset accuracy; a 1-D target is a
    binary problem learnt as one label.  A chunk of fewer than ``n_neighbors + 1`` instances (from 2),
    in ``fit`` or ``partial_fit``, builds its graph with all ``N - 1`` others as neighbours (Eq. Re
    needs ``K < N``); a chunk of 1 instance is refused.  ``decision_function`` is the decision rule's
    margin, ``> 0`` exactly where ``predict`` predicts; ``predict_proba`` its probability (1/2 at the
    threshold), ``predict_clean_proba`` the calibrated ``P(clean label = 1 | x)``; ``ranking_scores``
    the raw ``H Phi``.

    Attributes
    ----------
    classes_ : ndarray
        ``arange(q)`` for a label matrix; the two classes of a 1-D target.
    n_features_in_ : int
        Features of the first chunk (every later ``X`` must have as many).
    feature_names_in_ : ndarray of str (object)
        The column names of a DataFrame first chunk with string column names (absent otherwise); a
        later DataFrame with other names, or the same names in another order, is refused.
    coef_ : ndarray (L, q)
        ``Phi``.
    psi_ : ndarray (L, q)
        ``Psi``, the solution without the ranking statistics (never shrunk: ``shrinkage`` acts on ``coef_``).
    statistics_ : SufficientStatistics
        The sums ``H^T H, E^T E, H^T Y, H^T A`` since the last reset (:mod:`ncld_core.model.statistics`).
    chunk_statistics_ : SufficientStatistics
        The last chunk's terms (what it added; the sweep solves them for other parameters).
    K_, B_score_, B_rank_ : ndarray
        The normal equations of :attr:`statistics_` at the current ``alpha``, ``beta``, ``gamma``,
        ``hessian`` (so ``set_params`` between chunks applies to everything seen).
    decision_state_ : dict
        Running state of the decision rules (:func:`ncld_core.model.decision.update_state`).
    history_ : pandas.DataFrame
        One row per chunk learned, columns :data:`HISTORY_COLUMNS`.
    flip_rates_history_ : pandas.DataFrame
        The per-label rates used at every chunk (given or estimated): columns
        ``chunk, label, rho_pos, rho_neg``.
    flip_rate_estimator_ : FlipRateEstimator or None
        The online estimator (None when the rates are given).
    trusted_from_start_ : bool
        The first chunk came with trusted rows (``partial_fit(trusted=)``): what ``loss="auto"`` regresses with
        estimated rates (:meth:`loss_in_use`).  Absent in a model saved before it: False.
    labels_missing_at_start_ : bool
        With trusted rows from the start, the first chunk's labels looked missing (``rho_-`` bounded near 0 on most
        labels), which keeps ``loss="auto"`` at "paper" (:meth:`loss_in_use`).  Absent in a model saved before it:
        False.
    """

    def __init__(
        self,
        n_hidden=300,
        alpha=1.8,
        beta=0.18,
        gamma=0.005,
        delta=0.05,
        detector="adaptive+labels",
        monitors=(),
        n_neighbors=20,
        strategy="none",
        rho_pos=None,
        rho_neg=None,
        flip_rates="auto",
        probability_model=DEFAULT_PROBABILITY_MODEL,
        hessian="exact",
        decision="f1-bounded",
        loss="auto",
        shrinkage=0.0,
        scaling="auto",
        graph_reg=1e-6,
        random_state=None,
        n_threads="auto",
    ):
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.delta = delta
        self.detector = detector
        self.monitors = monitors
        self.n_neighbors = n_neighbors
        self.strategy = strategy
        self.rho_pos = rho_pos
        self.rho_neg = rho_neg
        self.flip_rates = flip_rates
        self.probability_model = probability_model
        self.hessian = hessian
        self.decision = decision
        self.loss = loss
        self.shrinkage = shrinkage
        self.scaling = scaling
        self.graph_reg = graph_reg
        self.random_state = random_state
        self.n_threads = n_threads

    # ------------------------------------------------------------------ validation
    def check_params(self) -> None:
        """Refuse a parameter outside its allowed values (ValueError naming it), as ``partial_fit`` would;
        a fitted model's flip rates are checked against its label count (checkpoints call it on load)."""
        self._validate_params(self.n_labels_ if self.is_fitted else None)

    def _validate_params(self, n_labels):
        for name, allowed in PARAM_RANGES.items():
            if name == "alpha" and alpha_grid(self.alpha) is not None:
                continue  # "auto" or a grid, checked by alpha_grid
            allowed.check(getattr(self, name), name)
        check_random_state(self.random_state)
        check_n_threads(self.n_threads)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        detector = self.detector
        if not isinstance(detector, str) or detector not in DETECTORS:
            raise ValueError(f"detector must be one of {list(DETECTORS)}; got {detector!r}")
        monitors = self._monitor_names()
        for name in monitors:
            if not isinstance(name, str) or name not in DETECTORS:
                raise ValueError(f"monitors: each must be one of {list(DETECTORS)}; got {name!r}")
        check_decision(self.decision)
        check_loss(self.loss, auto=True)
        if self.shrinkage > 0 and self.loss_in_use() not in SHRINKABLE_LOSSES:
            raise ValueError(f"shrinkage: the flip noise of loss={self.loss_in_use()!r} is not modelled; "
                             f"use shrinkage=0 or a loss of {SHRINKABLE_LOSSES}")
        if self.loss == "forward" and alpha_grid(self.alpha) is not None:
            # the grid's values are scored as ridges; "forward" would then solve with one it never scored
            raise ValueError("alpha: loss='forward' scales a fixed ridge by 1 / (1 - rho_+ - rho_-)^2 per label; "
                             "give a number, not 'auto' or a grid")
        if self.hessian not in HESSIANS:
            raise ValueError(f"hessian must be one of {HESSIANS}, got {self.hessian!r}")
        if self._estimates_rates():
            rho_pos = rho_neg = None
        else:
            rho_pos, rho_neg = check_flip_rates(
                0.0 if self.rho_pos is None else self.rho_pos,
                0.0 if self.rho_neg is None else self.rho_neg,
                n_labels=n_labels,
            )
        return rho_pos, rho_neg, make_probability_model(self.probability_model)

    def _monitor_names(self) -> tuple:
        monitors = self.monitors
        if isinstance(monitors, str):
            monitors = (monitors,)
        try:
            return tuple(monitors)
        except TypeError:
            raise ValueError(f"monitors must be a list of detector names; got {monitors!r}") from None

    def _new_detectors(self) -> dict:
        """The acting detector under "" and each monitor under its name, fresh."""
        detectors = {"": make_detector(self.detector, self.delta)}
        for name in self._monitor_names():
            detectors[name] = make_detector(name, self.delta)
        return detectors

    def _estimates_rates(self) -> bool:
        mode = self.flip_rates
        given = self.rho_pos is not None or self.rho_neg is not None
        if isinstance(mode, FlipRateEstimator):
            mode = "estimate"
        elif not isinstance(mode, str) or mode not in FLIP_RATE_MODES:
            raise ValueError(f"flip_rates must be one of {FLIP_RATE_MODES} or a FlipRateEstimator, got {mode!r}")
        if mode == "estimate" and given:
            raise ValueError("flip_rates='estimate' estimates the rates: leave rho_pos and rho_neg as None")
        return mode == "estimate" or (mode == "auto" and not given)

    def _new_rate_estimator(self):
        if isinstance(self.flip_rates, FlipRateEstimator):
            return copy.deepcopy(self.flip_rates)
        return FlipRateEstimator()

    def _chunk_neighbors(self, n: int) -> int:
        """The graph's neighbour count for a chunk of ``n`` instances: ``n_neighbors``, or all ``n - 1``
        others when the chunk is smaller (Eq. Re needs ``k < n``); a chunk of 1 instance has none."""
        if n < 2:
            raise ValueError(f"X has 1 sample: a chunk needs at least 2 instances to build the feature graph "
                             f"(Eq. Re: each instance is reconstructed from up to n_neighbors={self.n_neighbors} others)")
        return min(self.n_neighbors, n - 1)

    def _check_budget(self, X, n_labels, chunk_size):
        """Refuse (ValueError naming the parameters) a chunk over the memory budget, before any work."""
        check_budget(chunk_size=chunk_size, n_hidden=self.n_hidden, n_features=X.shape[1], n_labels=n_labels,
                     n_neighbors=self.n_neighbors, probability_model=self.probability_model)

    @property
    def is_fitted(self) -> bool:
        return getattr(self, "statistics_", None) is not None

    # The normal equations K Phi = B_score - B_rank of the sums (NOTES §1-2), at the current parameters
    # (with loss="forward" each label has its own ridge; K_ is at their mean: _alpha_in_use).
    @property
    def K_(self) -> np.ndarray:
        self._check_fitted()
        return self.statistics_.K(self._alpha_in_use(), self.beta, self.hessian)

    @property
    def B_score_(self) -> np.ndarray:
        self._check_fitted()
        return self.statistics_.B_score(self.beta)

    @property
    def B_rank_(self) -> np.ndarray:
        self._check_fitted()
        return self.statistics_.B_rank(self.gamma)

    # ------------------------------------------------------------------ one chunk
    def _chunk_terms(self, hidden, X, Y01, rho_pos, rho_neg, prob_model, noisy_proba, estimator=None,
                     coef=None, cache=None, n_neighbors=None, decision_state=None, trusted=None,
                     Y_trusted=None) -> ChunkTerms:
        """Everything one chunk contributes (:class:`~ncld_core.model.chunk_terms.ChunkTerms`): its
        :class:`SufficientStatistics` and what was computed beside them; the model is not changed, except that a fresh
        start's first chunk settles ``labels_missing_at_start_`` (:meth:`_settle_start`, undone by :meth:`_fresh_start`
        if the fit fails).

        With ``estimator`` (a FlipRateEstimator) the rates are its estimates after this chunk;
        ``coef``, the output weights before the chunk, gives it the chunk's prequential scores.
        ``cache`` (a :class:`~ncld_core.model.chunk_cache.ChunkCache`) shares ``H``, the graph and
        ``P_D`` with the other models learning the chunk.  ``n_neighbors`` (default: the
        parameter) is the graph's neighbour count; only ``fit`` on a small ``X`` passes fewer.
        ``trusted`` / ``Y_trusted``: the chunk's trusted rows (checked), handed to the estimator.
        ``loss="denoise"`` reads the clean probability of the chunk from ``coef`` (calibrated by
        ``decision_state`` when given), or on a first chunk from the noise-corrected ``P_D``.
        """
        k = self.n_neighbors if n_neighbors is None else n_neighbors

        def memo(key, compute):
            return compute() if cache is None else cache.get(key, compute)

        layer = None if cache is None else cache.layer_key(hidden)
        Xs = hidden.scale(X)
        H = _hidden(hidden, Xs, cache)
        # Rates all 0 make every weight (P - 0) / P = 1 and beta = 1 drops the graph term, so plain
        # online ELM needs neither P_D nor the graph: skipped (the result is bit-identical).
        needs_proba = estimator is not None or bool(np.any(rho_pos) or np.any(rho_neg))
        needs_graph = self.beta < 1.0 or (needs_proba and noisy_proba is None) or estimator is not None
        if needs_graph:
            S, nbrs = memo(("graph", layer, k, self.graph_reg), lambda: reconstruction_weights(
                Xs, k, reg=self.graph_reg, gram=gram_matrix(Xs), return_neighbors=True)[:2])
        if noisy_proba is not None:  # validated even where it is not needed
            P = np.asarray(noisy_proba, dtype=np.float64)
            if P.shape != Y01.shape:
                raise ValueError(f"noisy_proba has shape {P.shape}, expected {Y01.shape}")
            if not np.all((P >= 0) & (P <= 1)):
                raise ValueError("noisy_proba must hold probabilities in [0, 1]")
        elif not needs_proba:
            P = None
        else:
            # A probability model given as an object may hold state: shared only when named.
            key = self.probability_model if isinstance(self.probability_model, str) else object()
            P = memo(("P_D", layer, k, self.graph_reg, key),
                     lambda: prob_model.predict_proba(H, Y01, nbrs))
        if estimator is not None:
            estimator = estimator.updated(P, Y01, nbrs, scores=None if coef is None else H @ coef,
                                          trusted=trusted, Y_trusted=Y_trusted)
            rho_pos, rho_neg = estimator.rho_pos_, estimator.rho_neg_
            self._settle_start(estimator)
        Y_pm = 2.0 * Y01 - 1.0
        W = importance_weights(Y_pm, P, rho_pos, rho_neg) if needs_proba else np.ones_like(Y_pm)
        # Estimated rates: the interval is the identified set of their bounds, or the trusted sample's.
        cardinality = _cardinality(Y01, rho_pos, rho_neg, estimator)
        # The detectors test what rates cannot fake: with rates told (fixed) the moment cardinality, an affine map
        # of the observed labels; with rates estimated the observed cardinality itself, whose mean at constant
        # rates moves only when the clean one does (Eq. NR is linear), while estimates that move between
        # chunks would read as drift.  lcard_hat (the display) stays the de-noised estimate.
        signal = ChunkSignal.from_labels(Y01, cardinality.per_instance if estimator is None else None,
                                         instance_cardinality(Y_pm, W))
        A = ranking_matrix(Y_pm, W)
        # What the score term regresses (``loss``, :mod:`ncld_core.model.noisy_targets`); rates 0: the labels.
        loss = self.loss_in_use()
        targets = Y_pm if not needs_proba else regression_targets(
            loss, Y01, rho_pos, rho_neg,
            None if loss in ("paper", "backward", "forward") else
            self._clean_proba_before(H, None if loss == "denoise-knn" else coef, decision_state, P, rho_pos, rho_neg))
        HtH = memo(("HtH", layer), lambda: H.T @ H)
        if needs_graph:
            EtE = memo(("EtE", layer, k, self.graph_reg), lambda: _residual_gram(H, S))
        else:  # beta = 1: the graph term has weight 0 (it stays 0 if beta is changed later)
            EtE = np.zeros_like(HtH)
        return ChunkTerms(
            sufficient=SufficientStatistics(HtH, EtE, H.T @ targets, H.T @ A),
            H=H,
            Y01=Y01,
            rho_pos=rho_pos,
            rho_neg=rho_neg,
            estimator=estimator,
            cardinality=cardinality,
            signal=signal,
            observed_cardinality=float(Y01.sum(axis=1).mean()),
            mean_weight=float(W.mean()),
        )

    def _clean_proba_before(self, H, coef, decision_state, P, rho_pos, rho_neg) -> np.ndarray:
        """``P(g = 1 | x)`` of a chunk before its labels are learnt (``loss="denoise"``): the model's calibrated
        clean probability (:func:`~ncld_core.model.decision.clean_probability`), its scores cut to [0, 1]
        without a calibration (``fit``), or, with no model yet, the neighbours' ``P_D`` with the noise removed."""
        if coef is None:
            return noise_free_probability(P, rho_pos, rho_neg)
        scores = H @ coef
        if decision_state is None:
            return np.clip((scores + 1.0) / 2.0, 0.0, 1.0)
        return clean_probability(decision_state, self._noisy_scale(scores, decision_state["rho_pos"],
                                                                   decision_state["rho_neg"]))

    def _noisy_scale(self, scores, rho_pos, rho_neg) -> np.ndarray:
        """The scores as the decision rules read them (:func:`~ncld_core.model.noisy_targets.noisy_scale`)."""
        return noisy_scale(self.loss_in_use(), scores, rho_pos, rho_neg)

    def loss_in_use(self) -> str:
        """The loss of :data:`~ncld_core.model.noisy_targets.LOSSES` the model learns with: ``loss``, or for
        ``loss="auto"`` "backward" with given rates and with estimated ones "forward" if the first chunk came
        with a trusted sample (``trusted_from_start_``), its labels did not look missing
        (``labels_missing_at_start_``) and ``alpha`` is a number, else "paper"
        (:func:`~ncld_core.model.noisy_targets.resolve_loss`)."""
        # With a ridge grid (alpha="auto" or a list) the grid scores one ridge for all labels: "auto" stays "paper".
        trusted = (getattr(self, "trusted_from_start_", False) and not getattr(self, "labels_missing_at_start_", False)
                   and alpha_grid(self.alpha) is None)
        return resolve_loss(self.loss, self._estimates_rates(), trusted=trusted)

    def _ridges(self, alpha: float, rho_pos, rho_neg):
        """The ridge to solve with for the ridge parameter ``alpha`` (a number, or per label with
        ``loss="forward"``: ``alpha / d_j^2``) and the number ``alpha_`` and the record keep (the labels' mean)."""
        ridge = alpha * ridge_scale(self.loss_in_use(), rho_pos, rho_neg)
        return ridge, float(np.mean(ridge))

    def _solve_statistics(self, stats: SufficientStatistics, alpha):
        """``Phi``, ``Psi`` and cond(K) of the sums ``stats`` at the current parameters and the ridge ``alpha``
        (a number, or an array: one ridge per label, ``loss="forward"``, :meth:`_ridges`)."""
        smallest = float(np.min(alpha))

        def check(low, high):
            if not low + smallest > 0:
                raise self._indefinite()

        # K = a I + G: the data part G and the ridge solved together (ncld_core.model.ridge, as the sweep does)
        B_score = stats.B_score(self.beta)
        (coef, psi), (low, high) = solve_ridge(stats.K(0.0, self.beta, self.hessian), alpha,
                                               B_score - stats.B_rank(self.gamma), B_score, check=check)
        return coef, psi, float((high + smallest) / (low + smallest))  # the worst-conditioned label's K

    def _shrink(self, coef, stats: SufficientStatistics, ridge, terms: ChunkTerms) -> np.ndarray:
        """``coef`` with what the flips add to it shrunk across labels (``shrinkage``,
        :mod:`ncld_core.model.noise_shrinkage`), at the rates and clean prevalences of ``terms`` (the last chunk)."""
        if not self.shrinkage:
            return coef
        noise = flip_noise_variance(self.loss_in_use(), terms.rho_pos, terms.rho_neg, terms.cardinality.prevalence)
        return shrink_output(coef, stats.HtH, stats.K(0.0, self.beta, self.hessian), ridge, self.beta, noise,
                             self.shrinkage)

    def _alpha_in_use(self) -> float:
        """The ridge of ``K_``: the one used by the last chunk learnt (the parameter, or with
        ``alpha="auto"`` / a grid the value chosen online; with ``loss="forward"``, whose labels each have
        their own, the labels' mean, so that ``K_`` is not the matrix any label was solved with)."""
        self._check_fitted()
        return float(self.alpha_)

    def _select_alpha(self, grid, terms: ChunkTerms | None, stats, losses):
        """With a grid (``alpha="auto"``, :mod:`ncld_core.model.capacity`): the ridge to solve with after
        this chunk and the discounted losses.  Every grid value's model of the sums ``stats`` before the
        chunk (None: the first chunk) is scored on the chunk before it is learnt; one ``eigh`` gives them all."""
        if grid is None:
            return float(self.alpha), None
        if stats is None:
            return start_alpha(grid), np.zeros(len(grid))
        acc = np.zeros(len(grid)) if losses is None or len(losses) != len(grid) else np.asarray(losses, float)
        mu, V = np.linalg.eigh(stats.K(0.0, self.beta, self.hessian))  # the data part: K - alpha I
        B = stats.B_score(self.beta) - stats.B_rank(self.gamma)
        chunk = terms.sufficient
        if alpha_criterion(self.alpha) == "mse":
            new = prequential_losses(mu, V, B, chunk.HtH, chunk.HtY, terms.n_instances,
                                     label_weights(terms.rho_pos, terms.rho_neg, chunk.HtY.shape[1]), grid)
        else:
            new = prequential_ap_losses(mu, V, B, terms.H, terms.Y01, grid, criterion=alpha_criterion(self.alpha),
                                        rho_pos=terms.rho_pos, rho_neg=terms.rho_neg)
        acc = ALPHA_DISCOUNT * acc + new
        if not np.any(np.isfinite(acc)):
            raise ValueError("alpha: no grid value keeps K positive definite; use larger values")
        return float(grid[int(np.argmin(acc))]), acc

    def _indefinite(self) -> ValueError:
        """The error of a ``K`` that is not positive definite, naming what to change."""
        if self.hessian == "paper":
            return ValueError(
                f"hessian='paper' makes K indefinite at beta={self.beta} (the published Hessian "
                "drops a (1-beta) I term; it is only usable for beta > 1/2, see NOTES §1); "
                "use hessian='exact'")
        return ValueError("K is not positive definite; increase alpha")

    # ------------------------------------------------------------------ public API
    @limited
    def partial_fit(self, X, Y, *, classes=None, noisy_proba=None, cache=None, trusted=None, Y_trusted=None):
        """Learn one chunk ``D_i``; the first call is the initialisation chunk ``D_0``.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix (N, d), N >= 2 (numbers only).  Below
            ``n_neighbors + 1`` instances the graph links each to all ``N - 1`` others.
        Y : array-like (N, q) with labels in {0, 1} or {-1, +1}: the *observed* labels.
            A 1-D target with two classes is learnt as one label (:mod:`ncld_core.sklearn_compat`).
        classes : array-like, optional
            Only for a 1-D target whose first chunk holds one class: both classes
            (scikit-learn's ``partial_fit`` convention).
        noisy_proba : array (N, q), optional
            A known ``P_D(y=+1 | x)`` for the chunk; replaces the probability model
            (oracle experiments).
        cache : ChunkCache, optional
            Made for exactly this ``(X, Y)`` (:mod:`ncld_core.model.chunk_cache`): shares the hidden
            output, graph and ``P_D`` with other models learning the same chunk (the runner does).
        trusted : bool array (N,), optional
            A trusted sample: the rows of the chunk whose clean labels are known (checked by hand, a
            gold set).  With estimated rates they give direct counts of the flips and the regression
            estimate of the cardinality (:mod:`ncld_core.model.flip_rates`, :mod:`ncld_core.model.cardinality`);
            the model still learns every row from ``Y``.  With given rates they are checked and not needed.
        Y_trusted : array-like (trusted.sum(), q)
            The clean labels of the trusted rows, in row order ({0, 1} or {-1, +1}).

        On any error the model is left exactly as it was.
        """
        t0 = time.perf_counter()
        if cache is not None:
            cache.check(X, Y)
        X, Y01, inputs = self._learning_chunk(X, Y, classes, reset=False)
        trusted, Y_trusted = check_trusted(trusted, Y_trusted, Y01.shape)
        rho_pos, rho_neg, prob_model = self._validate_params(Y01.shape[1])
        k = self._chunk_neighbors(X.shape[0])
        self._check_budget(X, Y01.shape[1], X.shape[0])
        first = not self.is_fitted
        if not first:
            return self._learn_chunk(X, Y01, inputs, trusted, Y_trusted, rho_pos, rho_neg, prob_model, k,
                                     noisy_proba, cache, t0)
        # What loss="auto" regresses with estimated rates depends on a trusted sample from the first chunk on
        # and on what the first chunk's labels look like (resolve_loss); the chunk's terms read and settle it.
        with self._fresh_start(trusted is not None and bool(trusted.any())):
            return self._learn_chunk(X, Y01, inputs, trusted, Y_trusted, rho_pos, rho_neg, prob_model, k,
                                     noisy_proba, cache, t0)

    @contextlib.contextmanager
    def _fresh_start(self, trusted: bool):
        """For a fit from scratch: ``trusted_from_start_`` set to ``trusted`` and ``labels_missing_at_start_`` left
        for the first chunk's rate estimate to settle (:meth:`_settle_start`; False without trusted rows, where it
        changes nothing).  :meth:`loss_in_use` reads both while the fit runs; both are restored as they were if the
        fit fails, so that a failed call leaves the model as it was."""
        missing = object()
        names = ("trusted_from_start_", "labels_missing_at_start_")
        before = {name: self.__dict__.get(name, missing) for name in names}
        self.trusted_from_start_ = trusted
        self.labels_missing_at_start_ = None if trusted else False
        try:
            yield
        except BaseException:
            for name, value in before.items():
                if value is missing:
                    self.__dict__.pop(name, None)
                else:
                    setattr(self, name, value)
            raise
        if self.labels_missing_at_start_ is None:  # rates given: no estimate to read
            self.labels_missing_at_start_ = False

    def _settle_start(self, estimator) -> None:
        """During a fresh start's first chunk (:meth:`_fresh_start`), once ``estimator`` has read it: whether its
        labels look missing (:func:`_labels_look_missing`), which turns ``loss="auto"`` with trusted rows from
        "forward" to "paper" for the model's life (the forward loss divides by ``1 - rho_+ - rho_-`` a ``rho_+``
        the missing labels do not identify; ``docs/rates-unknown.md``)."""
        if estimator is not None and getattr(self, "labels_missing_at_start_", False) is None:
            self.labels_missing_at_start_ = _labels_look_missing(estimator)

    def _learn_chunk(self, X, Y01, inputs, trusted, Y_trusted, rho_pos, rho_neg, prob_model, k, noisy_proba, cache,
                     t0):
        """:meth:`partial_fit` on a validated chunk; nothing is committed before its end (but the first chunk's
        ``labels_missing_at_start_``, which :meth:`_fresh_start` restores if the chunk fails)."""
        first = not self.is_fitted
        estimating = rho_pos is None
        if first:
            hidden = RandomHiddenLayer(self.n_hidden, self.scaling, self.random_state).fit(X)
            detectors = self._new_detectors()
            estimator = self._new_rate_estimator() if estimating else None
        else:
            hidden = self.hidden_
            detectors = self._current_detectors()
            estimator = self.flip_rate_estimator_
            if estimating and estimator is None:
                raise ValueError("flip_rates: this model was fitted with given rates; it cannot switch to 'estimate'")
            if not estimating:
                estimator = None
        terms = self._chunk_terms(hidden, X, Y01, rho_pos, rho_neg, prob_model, noisy_proba, estimator,
                                  coef=None if first else self.coef_, cache=cache, n_neighbors=k,
                                  decision_state=None if first else self.decision_state_,
                                  trusted=trusted, Y_trusted=Y_trusted)
        results = {name: det.update(terms.signal) for name, det in detectors.items()}
        result = results[""]
        if result.fired and terms.estimator is not None and terms.estimator.trusted_sample() is not None:
            # A firing, acted on or not: the trusted rows drawn before it describe the old label distribution, and
            # the chunk's own may straddle the change.  The cardinality's regression restarts from the next
            # chunk's rows (flip counts kept); this chunk's estimate is recomputed without them.
            estimator = terms.estimator.after_change()
            terms = dataclasses.replace(terms, estimator=estimator,
                                        cardinality=_cardinality(Y01, terms.rho_pos, terms.rho_neg, estimator))
        action = drift_action(result.fired, self.strategy, first)
        grid = alpha_grid(self.alpha)
        alpha, losses = self._select_alpha(grid, terms, None if first else self.statistics_,
                                           None if first else self.alpha_losses_)
        ridge, alpha = self._ridges(alpha, terms.rho_pos, terms.rho_neg)
        stats = accumulate(None if first else self.statistics_, terms.sufficient, action)
        coef, psi, cond = self._solve_statistics(stats, ridge)
        coef = self._shrink(coef, stats, ridge, terms)
        estimator = terms.estimator
        if estimator is not None and action in ("retrain", "adjust"):
            estimator = estimator.after_drift()
        # The decision state reads the chunk's prequential scores (the model before it), or, when the
        # model starts afresh (first chunk, drift reset), the new model's scores, and restarts.
        decision_state = update_state(
            None if action in ("init", "retrain", "adjust") else self.decision_state_,
            self._noisy_scale(terms.H @ (coef if action in ("init", "retrain", "adjust") else self.coef_),
                              terms.rho_pos, terms.rho_neg), Y01, terms.rho_pos,
            terms.rho_neg, cardinality=terms.cardinality.estimate, prevalence=terms.cardinality.prevalence,
            rates_estimated=terms.estimator is not None,
            cardinality_identified=_pinned_by_trusted_rows(terms.estimator, terms.cardinality),
            rates_free=_rates_free(terms.estimator, terms.cardinality, self.loss_in_use()))
        record = ModelChunkRecord(
            chunk=0 if first else len(self._chunk_records()),
            n_instances=terms.n_instances,
            observed_cardinality=terms.observed_cardinality,
            lcard_hat=terms.cardinality.estimate,
            lcard_se=terms.cardinality.se,
            lcard_low=terms.cardinality.low,
            lcard_high=terms.cardinality.high,
            lcard_paper=float(terms.signal.paper.mean()),
            detector=self.detector,
            statistic=result.statistic,
            threshold=result.threshold,
            fired=bool(result.fired),
            action=action,
            mean_weight=terms.mean_weight,
            k_condition=cond,
            alpha=alpha,
            rho_pos_mean=float(np.mean(terms.rho_pos)),
            rho_neg_mean=float(np.mean(terms.rho_neg)),
            seconds=time.perf_counter() - t0,
            prevalence_hat=_floats(terms.cardinality.prevalence),
            rho_pos_est=None if estimator is None else _floats(terms.rho_pos),
            rho_neg_est=None if estimator is None else _floats(terms.rho_neg),
            **_rate_bounds(terms.estimator),
            monitors={name: MonitorResult(r.statistic, r.threshold, bool(r.fired)) for name, r in results.items() if name},
            lcard_identified=bool(terms.cardinality.point_identified),
            n_trusted=0 if terms.estimator is None else terms.estimator.n_trusted_,
        )

        # Commit: nothing above changed the model.
        if first:
            self.hidden_ = hidden
            self._commit_inputs(inputs)
            self.n_labels_ = Y01.shape[1]
            self._rates = []
            self._records = []
        self._chunk_records().append(record)
        self.flip_rate_estimator_ = estimator
        self._rates.append((np.array(terms.rho_pos, dtype=float), np.array(terms.rho_neg, dtype=float)))
        self.detector_, self.monitors_ = detectors.pop(""), detectors
        self.statistics_, self.chunk_statistics_ = stats, terms.sufficient
        self.coef_, self.psi_ = coef, psi
        self.decision_state_ = decision_state
        self.alpha_, self.alpha_losses_ = alpha, losses
        self.alpha_grid_ = None if grid is None else np.asarray(grid, dtype=float)
        return self

    def _current_detectors(self) -> dict:
        """Copies of the fitted detectors (committed only if the chunk succeeds) at the current
        ``delta``; fresh ones where ``detector`` or ``monitors`` changed since (set_params)."""
        wanted = {"": self.detector, **{name: name for name in self._monitor_names()}}
        current = {"": self.detector_, **self.monitors_}
        out = {}
        for key, name in wanted.items():
            old = current.get(key)
            if old is not None and old.name == name:
                out[key] = copy.deepcopy(old)
                out[key].delta = self.delta
            else:
                out[key] = make_detector(name, self.delta)
        return out

    @limited
    def fit(self, X, Y, *, chunk_size=None, noisy_proba=None):
        """Forget everything, then the batch closed form (Eq. Gra0) on all of ``X``, graph built
        per block of ``chunk_size``.

        No drift detection; ``chunk_size=None`` builds one graph on all instances.
        Equivalent to the online model without drift adaptation on the same blocks.
        With ``chunk_size=None`` and fewer than ``n_neighbors + 1`` instances (at least 2), the
        graph links each instance to all ``N - 1`` others (``partial_fit`` refuses such a chunk);
        later chunks use ``n_neighbors``.  ``Y`` as in :meth:`partial_fit`.  On any error the
        model is left as it was.
        """
        with self._fresh_start(False):  # no trusted rows: what loss="auto" regresses without them
            return self._fit_blocks(X, Y, chunk_size, noisy_proba)

    def _fit_blocks(self, X, Y, chunk_size, noisy_proba):
        """:meth:`fit`'s work; nothing is committed before its end."""
        X, Y01, inputs = self._learning_chunk(X, Y, reset=True)
        n = X.shape[0]
        PARAM_RANGES["n_neighbors"].check(self.n_neighbors, "n_neighbors")
        if chunk_size is None:
            size, k = n, self._chunk_neighbors(n)
        else:
            size, k = chunk_size, self.n_neighbors
            check_in_range(size, "chunk_size", self.n_neighbors + 1, np.inf, integer=True)
        rho_pos, rho_neg, prob_model = self._validate_params(Y01.shape[1])
        self._check_budget(X[:size], Y01.shape[1], size)
        grid = alpha_grid(self.alpha)
        hidden = RandomHiddenLayer(self.n_hidden, self.scaling, self.random_state).fit(X[:size])
        # Estimated rates are updated block by block, as the online model does.
        estimator = self._new_rate_estimator() if rho_pos is None else None
        rates = []
        stats = None
        alpha, losses = self._select_alpha(grid, None, None, None)  # "auto": chosen block by block, as online
        for start in range(0, n, size):
            stop = min(start + size, n)
            if stop - start < k + 1:
                raise ValueError(
                    f"the last block has {stop - start} instances, fewer than n_neighbors + 1; "
                    "choose a chunk_size that divides the data better"
                )
            P = None if noisy_proba is None else np.asarray(noisy_proba)[start:stop]
            # The estimator ranks each block by the scores of the model fitted on the blocks before
            # it (as the online model does); only then is a solve per block needed.
            needs_coef = estimator is not None or self.loss_in_use() == "denoise"
            coef = None
            if needs_coef and start > 0:  # the model of the blocks before (terms: the last of them)
                before = self._ridges(alpha, *rates[-1])[0]
                coef = self._shrink(self._solve_statistics(stats, before)[0], stats, before, terms)
            terms = self._chunk_terms(hidden, X[start:stop], Y01[start:stop], rho_pos, rho_neg, prob_model, P,
                                      estimator, coef=coef, n_neighbors=k)
            estimator = terms.estimator
            rates.append((np.array(terms.rho_pos, dtype=float), np.array(terms.rho_neg, dtype=float)))
            if grid is not None and start > 0:
                alpha, losses = self._select_alpha(grid, terms, stats, losses)
            stats = accumulate(stats, terms.sufficient, "init" if start == 0 else "none")
        rates_pos, rates_neg = rates[-1]
        ridge, alpha = self._ridges(alpha, rates_pos, rates_neg)
        coef, psi, _ = self._solve_statistics(stats, ridge)
        coef = self._shrink(coef, stats, ridge, terms)
        decision_state = update_state(None, self._noisy_scale(hidden.transform(X) @ coef, rates_pos, rates_neg), Y01,
                                      rates_pos, rates_neg,
                                      **_whole_data_cardinality(Y01, rates_pos, rates_neg, estimator,
                                                                self.loss_in_use()))
        self.hidden_ = hidden
        detectors = self._new_detectors()
        self.detector_, self.monitors_ = detectors.pop(""), detectors
        self._commit_inputs(inputs)
        self.n_labels_ = Y01.shape[1]
        self.statistics_, self.chunk_statistics_ = stats, terms.sufficient
        self.coef_, self.psi_ = coef, psi
        self.decision_state_ = decision_state
        self.alpha_, self.alpha_losses_ = alpha, losses
        self.alpha_grid_ = None if grid is None else np.asarray(grid, dtype=float)
        self.flip_rate_estimator_ = estimator
        self._records = []  # fit learns no chunk: no record
        self._rates = rates
        return self

    def _check_fitted(self):
        if not self.is_fitted:
            raise self._not_fitted()

    @limited
    def hidden_output(self, X, *, cache=None) -> np.ndarray:
        """The hidden-layer output ``H`` (N, L) of ``X``; with ``cache`` (a
        :class:`~ncld_core.model.chunk_cache.ChunkCache` made for ``X``) the one the models scoring and learning
        the chunk share, computed once (read-only)."""
        if cache is not None:
            cache.check(X)
        X = self._fitted_X(X)  # first: an unfitted model has no hidden_
        return _hidden(self.hidden_, self.hidden_.scale(X), cache)  # as partial_fit's terms compute it

    def ranking_scores(self, X, *, cache=None) -> np.ndarray:
        """The label scores ``O = H Phi`` (N, q) of Eq. (N3), higher meaning more relevant ((N,) after a
        1-D target): what the labels are ranked by (the runner's ranking metrics) and what
        :meth:`decide` reads.  ``cache``: as in :meth:`hidden_output` (the runner scores a chunk's models with
        the cache they then learn it with, so its ``H`` is computed once for all of them)."""
        return self._scores_out(self.hidden_output(X, cache=cache) @ self.coef_)

    def decide(self, scores) -> np.ndarray:
        """0/1 int8 predictions from :meth:`ranking_scores` by the rule ``decision``
        (:func:`ncld_core.model.decision.decide`): ``decision_function > 0``."""
        self._check_fitted()
        rule = check_decision(self.decision)
        return decide(rule, self.decision_state_, self._state_scale(scores))

    def _chunk_records(self) -> list[ModelChunkRecord]:
        """The records of the chunks learnt, oldest first (the model's history; checkpoints of the
        format that kept rows are turned into records by :mod:`ncld_core.checkpoint`'s migration)."""
        return self._records

    def decision_function(self, X) -> np.ndarray:
        """The decision rule's margin (N, q), ``> 0`` exactly where :meth:`predict` predicts a label
        ((N,) after a 1-D target).

        ``a (u - tau)`` (:func:`ncld_core.model.decision.decision_margin`): ``u`` the label score on the
        noise-corrected scale, ``tau`` the threshold of the rule ``decision`` (one for all labels for the
        default ``"f1-bounded"``, per label for ``"prevalence"``, per instance for ``"topk"``), ``a > 0`` the
        slope of the noise-aware calibration, so the margin is in log-odds; beyond log-odds of 20 it is
        compressed as :meth:`predict_proba` compresses it (:func:`ncld_core.model.decision.margin_log_odds`):
        the log-odds of :meth:`predict_proba`'s value, so that its ties are ties here.  Non-decreasing in the
        label score within each label; across labels the order can differ from :meth:`ranking_scores` (each
        label's rates shift its scale), which is why rankings use :meth:`ranking_scores`.
        """
        return margin_log_odds(self._margin(X))

    def _margin(self, X) -> np.ndarray:
        """``a (u - tau)`` uncompressed (:func:`ncld_core.model.decision.decision_margin`)."""
        self._check_fitted()
        rule = check_decision(self.decision)
        return decision_margin(rule, self.decision_state_, self._state_scale(self.ranking_scores(X)))

    def predict_proba(self, X) -> np.ndarray:
        """Probabilities (N, q) that each label is relevant, **weighted as the decision rule weights
        them**: ``sigmoid(decision_function(X))``, so ``> 1/2`` exactly where :meth:`predict` predicts
        ((N, 2) ``[1 - p, p]`` after a 1-D target).

        What they mean under noise.  The label scores regress the *noisy* labels; on the noise-corrected
        scale ``u = ((o + 1)/2 - rho_-) / (1 - rho_+ - rho_-)`` they estimate the *clean* probability, and a
        Platt calibration fitted to the noisy labels under the flip model, ``P(y = 1 | x) = rho_- +
        (1 - rho_+ - rho_-) sigmoid(a u + b)`` (:func:`ncld_core.model.decision.fit_calibration`, on each
        chunk's prequential scores, averaged over the last chunks), gives ``p(x) = sigmoid(a u + b)``, an
        estimate of ``P(clean label = 1 | x)``: :meth:`predict_clean_proba`.  The decision rule predicts
        where ``p(x) > theta``, ``theta`` its threshold on that scale (the F1-oriented default sets
        ``theta`` below 1/2, since predicting a likely-relevant label pays off for F1 before 1/2);
        ``predict_proba`` is ``p`` with the relevant entries weighted ``(1 - theta) / theta``, i.e. the
        calibrated probability of the problem whose Bayes decision is the rule (as scikit-learn's
        ``predict_proba`` with ``class_weight``).

        Calibrated: :meth:`predict_clean_proba`, as far as the flip rates are right (given or estimated:
        estimated ``rho_-`` is an upper bound on labels without anchor points, :mod:`ncld_core.model.flip_rates`)
        and the scores relate to ``P(clean = 1 | x)`` logistically; on the synthetic generator its Brier
        score against the clean labels beats the uncorrected probability's (``tests/test_model.py``).
        Not calibrated: ``predict_proba`` itself, unless ``theta`` is 1/2; after ``fit`` the calibration
        is fitted on in-sample scores (overconfident), the first ``partial_fit`` too; and beyond odds
        of e^20 (below 2e-9 or above 1 - 2e-9) the log-odds are compressed so that the probabilities
        stay strictly inside (0, 1) and in the order of the margins, which float64 cannot do for a plain
        sigmoid past about 37.
        """
        return self._proba_out(margin_probability(self._margin(X)))

    def predict_clean_proba(self, X) -> np.ndarray:
        """The calibrated estimate of ``P(clean label = 1 | x)`` (N, q), ``sigmoid(a u + b)`` (see
        :meth:`predict_proba`; (N, 2) ``[1 - p, p]`` after a 1-D target).  Not what :meth:`predict`
        thresholds at 1/2: the decision rule's threshold on it is ``theta``."""
        self._check_fitted()
        return self._proba_out(clean_probability(self.decision_state_, self._state_scale(self.ranking_scores(X))))

    def _state_scale(self, scores) -> np.ndarray:
        """:meth:`_noisy_scale` at the rates of the decision state (those its thresholds were fitted with)."""
        state = self.decision_state_
        if state is None:  # a checkpoint from before decision states: the paper's loss and threshold 0
            return np.asarray(scores, dtype=np.float64)
        return self._noisy_scale(scores, state["rho_pos"], state["rho_neg"])

    @property
    def history_(self) -> pd.DataFrame:
        """Per-chunk diagnostics, one row per chunk learnt (see :data:`HISTORY_COLUMNS`; then the monitors'
        columns): :meth:`ModelChunkRecord.row <ncld_core.model.record.ModelChunkRecord.row>` of each record."""
        self._check_fitted()
        rows = [record.row() for record in self._chunk_records()]
        extra = [k for k in (rows[-1] if rows else {}) if k not in HISTORY_COLUMNS]
        return pd.DataFrame(rows, columns=[*HISTORY_COLUMNS, *extra])

    @property
    def flip_rates_history_(self) -> pd.DataFrame:
        """The per-label rates used at each chunk: columns ``chunk, label, rho_pos, rho_neg``."""
        self._check_fitted()
        rates = self._rates
        q = self.n_labels_
        return pd.DataFrame({
            "chunk": np.repeat(np.arange(len(rates)), q),
            "label": np.tile(np.arange(q), len(rates)),
            "rho_pos": np.concatenate([r[0] for r in rates]) if rates else np.zeros(0),
            "rho_neg": np.concatenate([r[1] for r in rates]) if rates else np.zeros(0),
        })

    @property
    def estimated_flip_rates_(self):
        """``(rho_pos, rho_neg)`` estimated so far, arrays (q,); None when the rates are given."""
        self._check_fitted()
        est = self.flip_rate_estimator_
        return None if est is None else (est.rho_pos_.copy(), est.rho_neg_.copy())

    @property
    def last_record_(self) -> ModelChunkRecord | None:
        """The newest chunk's :class:`~ncld_core.model.record.ModelChunkRecord` (None before any chunk).

        Beside the row of :attr:`history_` it holds ``prevalence_hat``, the per-label clean
        prevalence estimates of the chunk (:mod:`ncld_core.model.cardinality`), and, with estimated
        rates, ``rho_pos_est`` / ``rho_neg_est``.
        """
        self._check_fitted()
        records = self._chunk_records()
        return records[-1] if records else None


# ---------------------------------------------------------------------------------------- saved state
#: A detector of :data:`~ncld_core.model.detector.DETECTORS` (read when checked: a detector registered after
#: this module was imported counts).
_DETECTOR = Spec("a detector of DETECTORS", lambda v: type(v) in DETECTORS.values())


def _check_saved(s: dict) -> str | None:
    """The saved state's shapes agree: the hidden layer with the features, every per-label array with the labels."""
    if "statistics_" not in s:
        return None
    hidden, d, q = s["hidden_"], s["n_features_in_"], s["n_labels_"]
    if not hasattr(hidden, "weights_"):
        return "hidden_ is not fitted"
    L = hidden.n_hidden
    errors = [
        None if hidden.n_features_in_ == d else f"hidden_ was fitted on {hidden.n_features_in_} features, "
                                                f"the model on {d}",
        shape_error("coef_", s["coef_"], (L, q)),
        shape_error("psi_", s["psi_"], (L, q)),
        shape_error("statistics_.HtY", s["statistics_"].HtY, (L, q)),
        shape_error("chunk_statistics_.HtY", s["chunk_statistics_"].HtY, (L, q)),
        *(shape_error(f"_records[{i}].prevalence_hat", np.asarray(r.prevalence_hat), (q,))
          for i, r in enumerate(s["_records"]) if r.prevalence_hat is not None),
        *(shape_error(f"_rates[{i}]", r, (q,)) for i, pair in enumerate(s["_rates"]) for r in pair),
    ]
    estimator = s["flip_rate_estimator_"]
    if estimator is not None and hasattr(estimator, "rho_pos_"):
        errors.append(shape_error("flip_rate_estimator_.rho_pos_", estimator.rho_pos_, (q,)))
    if s["_binary_classes"] is not None:
        errors.append(shape_error("_binary_classes", s["_binary_classes"], (2,)))
        errors.append(None if q == 1 else f"a binary model has 1 label, not {q}")
    grid, losses = s["alpha_grid_"], s["alpha_losses_"]
    if grid is not None and losses is not None:
        errors.append(shape_error("alpha_losses_", losses, grid.shape))
    return first_error(*errors)


def _smoke_saved(model):
    """A fitted model's decisions, history and rates read on the loaded model (its margins finite on a probe)."""
    if model.is_fitted:
        model.decide(probe_decision(model))
        return model.history_, model.flip_rates_history_, model.last_record_
    return None


def _upgrade_saved_2(state: dict) -> None:
    """Checkpoint format 2 -> 3: what a model now always has, as the model behaved then; the history rows
    become one record per chunk."""
    state.setdefault("detector", "paper")  # before detectors had names: the paper's Eq. (Hfd)
    state.setdefault("monitors", [])
    state.setdefault("decision", "paper")  # before decision rules: threshold 0
    state.setdefault("loss", "paper")  # before loss choices: the noisy labels were the targets
    state.setdefault("flip_rates", "auto")  # before estimated rates: given ones, or "auto" with none given
    state.setdefault("n_threads", "auto")  # before thread budgets: the process's BLAS pools as they were
    if "statistics_" not in state:
        return
    state.setdefault("monitors_", {})
    state.setdefault("decision_state_", None)
    state.setdefault("flip_rate_estimator_", None)
    state.setdefault("_rates", [])
    state.setdefault("_binary_classes", None)
    if "alpha_" not in state:  # before the ridge was chosen online: the parameter
        alpha = state.get("alpha")
        try:
            grid = alpha_grid(alpha)
        except ValueError:
            grid = None  # refused by the model's own check afterwards
        state["alpha_"] = start_alpha(grid) if grid is not None else alpha
        state.setdefault("alpha_losses_", None)
        state.setdefault("alpha_grid_", None if grid is None else np.asarray(grid, dtype=float))
    rows = state.pop("_history", [])
    rows = rows if isinstance(rows, list) else []
    for row in rows:
        if isinstance(row, dict):
            row.setdefault("alpha", math.nan)  # not recorded before the ridge was chosen online
    # Format 2 kept the history as rows, with the newest chunk's prevalences and estimated rates beside
    # them; format 3 keeps one record per chunk, each with its own.
    records = [StoredRecord("ModelChunkRecord", dict(row)) for row in rows if isinstance(row, dict)]
    prevalence = state.pop("_prevalence", None)
    if records:
        rates = state.get("_rates") if state.get("flip_rate_estimator_") is not None else None
        records[-1].fields.update(
            prevalence_hat=None if prevalence is None else [float(v) for v in np.ravel(prevalence)],
            rho_pos_est=[float(v) for v in np.ravel(rates[-1][0])] if rates else None,
            rho_neg_est=[float(v) for v in np.ravel(rates[-1][1])] if rates else None)
    state["_records"] = records


def _upgrade_saved_4(state: dict) -> None:
    """Checkpoint format 4 -> 5: ``shrinkage=0``, the solve the model was written with (nothing shrunk)."""
    state.setdefault("shrinkage", 0.0)


#: What a checkpoint keeps (:mod:`ncld_core.saved_state`) besides the parameters: the hidden layer, the sums,
#: the per-chunk records and rates (in [0, 1)), the detectors, the output weights, the ridge chosen online;
#: the files of checkpoint formats 2 and 4 upgraded.
ELMNCLD.saved_state = SavedState(
    params={"random_state": optional(INT), "scaling": STR},
    fitted={
        "hidden_": instance_of(RandomHiddenLayer),
        "n_features_in_": COUNT,
        "n_labels_": COUNT,
        "_binary_classes": optional(array(1, NPY_KINDS)),
        "_records": list_of(instance_of(ModelChunkRecord)),
        "_rates": list_of(list_of(array(1, rng=RATE), 2)),  # each chunk's (rho_+, rho_-)
        "flip_rate_estimator_": optional(instance_of(FlipRateEstimator)),
        "detector_": _DETECTOR,
        "monitors_": dict_of(_DETECTOR),
        "statistics_": instance_of(SufficientStatistics),
        "chunk_statistics_": instance_of(SufficientStatistics),
        "coef_": array(2),
        "psi_": array(2),
        "decision_state_": optional(dict_of(PLAIN)),
        "alpha_": number(POSITIVE),
        # the grid's discounted losses (the "rank" criterion's are negative gains): +inf where a ridge is not
        # admissible (capacity.prequential_losses), never NaN or -inf
        "alpha_losses_": optional(array(1, rng=ValueRange(low=-math.inf, low_open=True, infinite=True))),
        "alpha_grid_": optional(array(1, rng=POSITIVE)),
    },
    # absent before issue 39's forward loss, and before its missing-label test
    optional={**FITTED_INPUTS, "trusted_from_start_": instance_of(bool), "labels_missing_at_start_": instance_of(bool)},
    check=_check_saved,
    smoke=_smoke_saved,
    upgrades={2: _upgrade_saved_2, 4: _upgrade_saved_4},
)
