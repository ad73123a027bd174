"""What each panel shows: the paper's equation (by its LaTeX label) and what to look for.

Plain text only, one :class:`Teaching` per panel (the Live run's registry, :mod:`dashboard.panels`, names
each panel's) and one for the sweep page; rendered by :func:`dashboard.ui.teach` in an ``st.expander``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ncld_core.config import PRESETS, RunConfig
from ncld_core.eval.drift_eval import change_chunks
from ncld_core.model.detector import DETECTORS


@dataclass(frozen=True)
class Teaching:
    """A panel's explanation: the expander's ``title``, its equations (``latex``, cited by the paper's
    labels) and what to look for (``text``, Markdown)."""

    title: str
    latex: tuple[str, ...]
    text: str


#: Short names of the drift detectors (ncld_core.model.detector.DETECTORS) for the controls and legends.
DETECTOR_LABELS = {
    "paper": "paper's Hoeffding test (Eq. Hfd)",
    "welch": "Welch t-test, adjacent chunks",
    "adaptive": "adaptive window (ADWIN-like)",
    "labels": "per-label prevalence test",
    "adaptive+labels": "adaptive window + per-label test",
    "glr": "GLR on the cardinality",
    "labels-glr": "per-label test, every change place",
    "glr+labels": "GLR + per-label test, every change place",
    "adaptive+labels-glr": "adaptive window + per-label test, every change place",
}
#: One or two sentences per detector, from ncld_core/model/detector.py.
DETECTOR_NOTES = {
    "paper": "Eq. (Hfd) as published: fires when the paper's Eq. (card) estimate moves between adjacent "
             "chunks by more than $\\varepsilon_i$. It applies a one-sample range bound to a difference of two "
             "chunks, on an estimate that is biased upwards, so δ is not a guaranteed false-alarm rate.",
    "welch": "Welch's t-test between the per-instance moment cardinalities of this chunk and the previous "
             "one; fires when its p-value is below δ. It sees cardinality changes only.",
    "adaptive": "Keeps the chunks since the last detected change and tests the newest 1, 2, 4, 8, 16 chunks "
                "against the older rest (Welch, Bonferroni over the splits), so a change missed at its "
                "chunk can still be caught later.",
    "labels": "This chunk's observed positives against the pooled window since the last firing, tested "
              "two ways (Bonferroni over both): the label that moved most (exact conditional test, Bonferroni "
              "over the labels) and all labels at once (Hotelling's T², the labels' correlation estimated on "
              "the chunk). It sees changes of which labels are relevant even at constant cardinality (a shift, "
              "which moves several labels a little each).",
    "adaptive+labels": "Fires when the adaptive window or the per-label test does, each at δ/2.",
    "glr": "The generalized likelihood ratio for a change of the mean cardinality at any place in the window "
           "since the last firing (the newest chunks against the older rest); its threshold is simulated for "
           "the window's length, so a stationary chunk fires with probability δ (one false alarm per 1/δ "
           "chunks on average).",
    "labels-glr": "The per-label test at every place a change may be: the newest 1, 2, 4, 8, 16 chunks against "
                  "the older rest (Bonferroni over the places). A shift too small for one chunk piles up against "
                  "a reference that has not moved, so it is found later rather than absorbed.",
    "glr+labels": "Fires when the GLR on the cardinality or the per-label test at every change place does, each "
                  "at δ/2.",
    "adaptive+labels-glr": "Fires when the adaptive window or the per-label test at every change place does, "
                           "each at δ/2.",
}
for _name in DETECTORS:  # a detector added to the core still gets a label
    DETECTOR_LABELS.setdefault(_name, _name)
    DETECTOR_NOTES.setdefault(_name, "see ncld_core/model/detector.py.")


def detector_label(name) -> str:
    """The human label of a detector name; an unknown one is shown as such."""
    return DETECTOR_LABELS.get(name, f"unknown detector {name!r}") if isinstance(name, str) else f"unknown detector {name!r}"


def noise_cost_text(cost: dict) -> str:
    """The sentence under the summary for :meth:`ncld_core.eval.runner.RunResult.noise_cost`."""
    metric = {"average_precision": "average precision", "micro_f1": "micro-F1"}.get(cost["metric"], cost["metric"])
    text = (f"What the noise cost: {cost['oracle']} (oracle) against {cost['plain']} on the noisy labels, "
            f"{cost['cost']:.3f} of {metric}. ")
    if cost["share"] is None:
        return text + f"The noise cost nothing here; {cost['corrected']} differs from {cost['plain']} by {cost['recovered']:+.3f}."
    return text + (f"The correction ({cost['corrected']}) recovers {cost['recovered']:.3f} of the {cost['cost']:.3f} "
                   f"({100 * cost['share']:.0f} %).")


METRICS = Teaching(
    title="Eq. (N3) · prequential HL, micro-F1, AP",
    latex=(
        r"\begin{aligned}\min_{\Phi}\ &\tfrac{\beta}{2}\|O-Y\|_F^2+\tfrac{1-\beta}{2}\|O-SO\|_F^2\\"
        r"&+\gamma\,\mathrm{Tr}(A^\top O)+\tfrac{\alpha}{2}\|\Phi\|_F^2,\quad O=H\Phi\end{aligned}",
        r"\hat y_{tj}=\mathbb{I}\{o_{tj}>0\},\quad o^i_t=h^i_t\,\Phi_{i-1}",
        r"\begin{aligned}\mathrm{HL}&=\tfrac{1}{Nq}\textstyle\sum_{t,j}\mathbb{I}\{\hat y_{tj}\ne g_{tj}\}\\"
        r"\text{micro-F1}&=\frac{2\sum TP}{2\sum TP+\sum FP+\sum FN}\end{aligned}",
    ),
    text=(
        "Test-then-train: each chunk is first scored with the model learned from the chunks before "
        "it (Eq. (N3), solved exactly — see NOTES §1), against the **ground truth** $G$, never the "
        "noisy $Y$; then it is learned from its noisy labels. Chunk 0 only initialises ($D_0$).\n\n"
        "**Look for:** ELM-NCLD against *ELM (plain)* (β = 1, γ = 0, no noise correction) — the "
        "gap is what the graph term and the importance-weighted ranking term buy under noise. Always compare with "
        "the trivial references: on sparse label sets *all-negative* has a very good Hamming loss. "
        "After a true change (dashed red; the learner is never told where), compare ELM-I (retrain) and ELM-II (adjust) with ELM-O: on "
        "the *concept growth* preset ELM-I recovers at once and ELM-II no faster than ELM-O."
    ),
)

#: What each band and point of the cardinality panel (b) is when the models estimate the flip rates, in at most
#: 40 words each (issue 39): its caption (figures.cardinality_note) and the unknown-noise lesson say it in these
#: words.  The identified set is the band that assumes no values of the rates; the 95 % interval rests on the
#: trusted rows; the point estimate on the estimated rates.
BANDS = {
    "identified": "The band is the identified set: every cardinality that rates between 0 and the bounds the "
                  "noisy labels give allow, plus sampling error. It assumes no values of the rates, only those "
                  "bounds (ρ+'s from the model's P_D): wide.",
    "trusted": "The band is a 95 % confidence interval given the trusted rows: their regression, or after a detected "
               "change the flip rates they count. It assumes the checked rows are a random sample and the flip "
               "rates stay fixed.",
    "point": "The squares are a point estimate under an assumption: the estimated rates plugged in, each label's "
             "prevalence cut to [0, 1]. Where the noisy labels do not pin the rates down, it is biased.",
}


CARDINALITY = Teaching(
    title="Moment identity · label cardinality, its interval or identified set; Eq. (card) for comparison",
    latex=(
        r"\begin{aligned}&\text{Eq. (NR):}\ p(y_{tj}=-1\mid g_{tj}=+1)=\rho_+^j,\\ &p(y_{tj}=+1\mid g_{tj}=-1)=\rho_-^j\end{aligned}",
        r"c_t=\sum_{j=1}^{q}\frac{y_{tj}-\rho_-^j}{1-\rho_+^j-\rho_-^j},\qquad \mathbb{E}[c_t]=\sum_{j}g_{tj}",
        r"\widehat{LCard}(D_i)=\tfrac1N\textstyle\sum_t c_t,\qquad \widehat{LCard}\pm1.96\,\mathrm{se}",
        r"\text{Eq. (card): }\tfrac1N\textstyle\sum_{t,j}\mathbb{I}_{\{y_{tj}=1\}}\max(\omega_{t,j},0),\ "
        r"\omega_{t,j}=\frac{P_D(y_{tj}\mid x_t)-\rho_{-y_{tj}}}{(1-\rho_+^j-\rho_-^j)\,P_D(y_{tj}\mid x_t)}",
    ),
    text=(
        "The learner never sees the true cardinality (black, *oracle*): it is drawn to judge the "
        "estimates. The observed cardinality (grey dotted) is biased: flips $\\rho_-$ add positives "
        "to the many irrelevant labels, so it sits above the truth and moves less at a change.\n\n"
        "The **moment estimate** (squares) corrects every observed label by its flip rates. It is "
        "unbiased *when the rates it is given are the true ones* (*The models are told: the true "
        "flip rates*); the shaded band is then a 95 % confidence interval for this chunk's true "
        "cardinality. When the rates are **estimated**, the noisy labels bound them (ρ+ only from "
        "above: a value needs instances surely positive), so the band is the **identified set**, not a "
        "confidence interval: "
        "the cardinalities consistent with any rates within the estimated bounds, widened by "
        "the sampling error; wide, because the data cannot say more, so that it holds the truth says "
        "little. The squares are then a *plug-in* of values inside those bounds (each label's prevalence "
        "cut to [0, 1]): biased, measured in `docs/flip-rates.md`. A **trusted sample** (a few checked "
        "instances per chunk, *trusted sample* under Label noise) turns the band into a 95 % interval: the "
        "regression of the checked instances' true cardinality on their estimate, or, after the detector fires, "
        "the estimate at the flip rates they count; it assumes they are a random sample and the rates stay fixed. "
        "With rates 0 (*ignore the noise*) the estimate is the observed cardinality "
        "and its band holds the truth only if the labels are in fact clean.\n\n"
        "**The paper's estimate** (tick *show the paper's estimate*) is Eq. (card): importance "
        "weights clipped at 0 and $P_D$ fitted on the same chunk. The paper calls it unbiased; it is "
        "not: it is biased upwards (measured by `python -m benchmarks.drift`). The caption under "
        "the plot says, for the run on screen, what the band is, its mean width, how often it holds "
        "the truth and how far the estimates lie from it.\n\n"
        "**Look for:** the band around the black line, and jumping with it at a growth / reduction "
        "even where the grey dotted line (the observed labels) moves by much less; at a *shift* the true "
        "cardinality does not change."
    ),
)

THRESHOLD = Teaching(
    title="Drift tests · statistic ÷ threshold, fires above 1 (Eq. (Hfd) and p-value tests)",
    latex=(
        r"\text{paper (Eq. Hfd): }\frac{\big|\widehat{LCard}(D_i)-\widehat{LCard}(D_{i-1})\big|}{\varepsilon_i},\quad"
        r"\varepsilon_i=R_i\sqrt{\frac{\ln(2/\delta)}{2N}}",
        r"\text{the others: }\frac{-\log_{10}p_{\mathrm{adj}}}{-\log_{10}\delta}\quad(>1\iff p_{\mathrm{adj}}<\delta)",
    ),
    text=(
        "One line per detector: its statistic divided by its threshold, on a log scale, so every "
        "test fires where its line crosses 1 (dashed). A filled circle is a firing that detects a "
        "true change, a × a false alarm (the same glyphs as in panel (d)); vertical lines mark the "
        "true changes. The **acting** detector is the one ELM-I / ELM-II react to; the **compared** "
        "ones are only recorded. Values below 0.01 are drawn at 0.01; hover for the raw numbers.\n\n"
        + "\n".join(f"* **{DETECTOR_LABELS[k]}** — {DETECTOR_NOTES[k]}" for k in DETECTOR_NOTES)
        + "\n\n"
        "**Look for:** how soon after a change each line crosses 1, and how often it crosses "
        "without one. A larger δ lowers every threshold (every line rises): more detections, more false alarms."
    ),
)

TIMELINE = Teaching(
    title="Drift adaptation · ELM-I retrain, ELM-II adjust (Eq. Z_Update)",
    latex=(
        r"\text{ELM-I: } \Phi_{i-1}:=0,\ P_i \text{ from } D_i \text{ only}",
        r"\text{ELM-II: } \Phi_{i-1}:=\Psi_{i-1}=\Phi_{i-1}+Z_{i-1}",
        r"\begin{aligned}Z_{i+1}=Z_i-P_{i+1}\big(&H_{i+1}^\top R_{i+1}H_{i+1}Z_i\\&-\gamma H_{i+1}^\top A_{i+1}\big)\end{aligned}",
    ),
    text=(
        "One row per detector. Diamonds and vertical lines: the true changes (the chunk holding the "
        "change position), labelled by kind; shading: the single- / multi-label regime (a *shift* "
        "changes which labels are relevant and keeps the regime). A firing is a **detection** "
        "(filled circle) if it is the first one from a change's chunk up to the next change; its "
        "delay is counted in chunks. Every other firing is a **false alarm** (×).\n\n"
        "Only the acting detector changes the models: ELM-O only records its firings; ELM-I restarts "
        "from the current chunk; ELM-II drops the old ranking statistics ($\\Psi$ solves Eq. (N2), "
        "no ranking term) and keeps the label-scoring ones.\n\n"
        "**Look for:** in the table, changes detected within one chunk, misses and false alarms per "
        "detector, all counted on the run on screen; a change at instance $p$ lies in chunk "
        "$\\lfloor p/N\\rfloor$."
    ),
)

RATES = Teaching(
    title="Flip rates · estimated online when the models are not told them",
    latex=(
        r"\hat\rho_-=\frac{\#\{t\in B:\ y_t=+1\}}{|B|},\quad B=\text{the 30\,\% of each chunk the model scores lowest}",
        r"\hat\rho_+=\tfrac12\Big(1-\operatorname{mean}_{\text{chunks}}\,q_{0.95}\big(P_D(y=1\mid x)\big)\Big)",
        r"\hat\rho_-\leftarrow\frac{\hat\rho_- - c\,(1-\hat\rho_+)}{1-c}\quad\text{(trusted rows: }c\text{ clean in }B)",
    ),
    text=(
        "Set *noise correction* (above the panels) to *rates estimated*. `rho_-` is the share of observed "
        "positives among the instances the model scored lowest *before* learning the chunk: mostly clean "
        "negatives, whose positives are flips, but the clean positives among them push it up. `rho_+` has "
        "only an upper bound without clean labels (one minus a high quantile of the noisy class probability, "
        "Liu & Tao 2016); the estimate is the middle of [0, bound]. A *trusted sample* adds counted flips per "
        "label, pooled across labels, and its rows among the lowest scores show how many clean positives "
        "are there: that share, `c`, is taken out of `rho_-`.\n\n"
        "**Look for:** in the table, without a trusted sample `rho_-` ends a hundredth or two above the "
        "truth on average over the labels; with 2 % trusted, within about a hundredth of it. `rho_+` stays "
        "rough either way: a few hundredths off per label (it needs instances surely positive, or many "
        "trusted ones). docs/rates-unknown.md measures both on the real datasets."
    ),
)

SUMMARY = Teaching(
    title="Summary · cumulative metrics and drift scores",
    latex=(r"\mathrm{GM}=\sqrt{(1-\mathrm{HL})\times\text{micro-F1}}",),
    text=(
        "Cumulative metrics over every scored chunk (chunk 0 is not scored), total seconds (the "
        "ELM variants share each chunk's hidden layer, graph and P_D; the first in the table pays for them), and "
        "for the ELM-NCLD variants the firings of the acting detector, detected / missed changes, false "
        "alarms and mean delay (chunks); panel (d) scores every detector. GM is the paper's tuning criterion (see the Sweep page)."
    ),
)

SWEEP = Teaching(
    title="Parameter sensitivity · β × γ (the paper's Fig. Sens)",
    latex=(
        r"\mathrm{GM}=\sqrt{\mathrm{Acc}\times\mathrm{F1}},\quad\mathrm{Acc}=1-\mathrm{HL}",
        r"K=\alpha I+\sum_i H_i^\top R_i H_i,\quad R_i=\beta I+(1-\beta)(I-S_i)^\top(I-S_i)",
        r"o^*_{tj}=\beta\,y_{tj}+(1-\beta)\sum_{n\in\mathcal N(t)}S_{t,n}\,o^*_{nj}\quad\text{(Eq. (P1))}",
    ),
    text=(
        "β weighs fitting the observed (noisy) labels against agreeing with the graph neighbours "
        "(Eq. (Re), (N2)); γ weighs the importance-weighted ranking term (Eq. (RL_New)). The paper searches "
        "β ∈ [0.3, 0.8], γ ∈ {0, 2⁻⁸, …, 2⁻³} and reports (0.55, 2⁻⁶).\n\n"
        "**Mind NOTES §1:** the paper's Hessian (Eq. (Gra)) drops a $(1-\\beta)I$ term. This lab "
        "solves the exact objective, where the paper's β = 0.55 corresponds to β' = (2β−1)/β ≈ 0.18 "
        "— and there is no collapse at β ≤ 0.5 (that drop is an artefact of the missing term). "
        "Measured on the default synthetic stream (ELM-O), the optimum does not sit lower: the best "
        "grid point is β = 0.95, γ = 2⁻³ (GM 0.675; at γ = 2⁻⁴ it is flat, 0.671 to 0.673, from β 0.35 to 1), "
        "against 0.594 at the defaults β = 0.18, γ = 0.005: γ matters more than β here."
    ),
)


#: "What you will see" per preset: every sentence is asserted on the preset's run by tests/test_presets.py.
PRESET_NOTES = {
    "clean vs noisy": "ELM-O trained on the clean labels (an oracle: the learner never has them) against ELM-O "
                      "and the plain ELM on labels flipped at rates from U[0.2, 0.4], β, γ on the sweep's plateau "
                      "(GM within 0.01 of its best). "
                      "In average precision the noise costs the plain ELM about 0.05 and ELM-O's correction "
                      "wins back about half of it (the summary gives the numbers of the run); micro-F1 "
                      "hides the cost: the added positives push scores above 0, and all three reach about the "
                      "same F1.",
    "concept growth": "Single-label instances first, multi-label from instance 2500 (chunk 10): the cardinality "
                      "estimate jumps from about 1 to about 3 and the detector fires in chunk 10, with no false "
                      "alarm. ELM-I (retrain) recovers at once (micro-F1 about 0.5 from chunk 11); ELM-II (adjust) "
                      "recovers no faster than ELM-O and ends below it.",
    "concept reduction": "The reverse: multi-label first, single-label from instance 2500 (chunk 10); the detector "
                         "fires in chunk 10. ELM-I (retrain) then has the lowest Hamming loss but the lowest "
                         "micro-F1: it predicts few labels, while ELM-O and ELM-II keep the multi-label fit.",
    "unknown noise: estimate the rates": "Missing labels (annotators skip relevant labels: ρ+ about 0.2, ρ− "
                                         "below 0.05) and ELM-O told nothing about them. The noisy labels alone pin "
                                         "ρ− down but not ρ+, of which only an upper bound holds: with the trusted "
                                         "sample at 0 the cardinality band is the identified set, about 2.5 labels "
                                         "per instance wide. The preset checks 2 % of each chunk (about 5 "
                                         "instances). In the first chunk they are too few for an interval: the "
                                         "estimate is their mean, the band still the identified set. From the "
                                         "second chunk on the band is a 95 % interval about 0.6 wide that holds "
                                         "the truth in every chunk, the estimate within 0.1 of it.",
    "label shift": "In chunks of 500, from instance 2500 (chunk 5) other labels are relevant, as many as before: "
                   "the true cardinality stays at about 2 in every chunk. The cardinality test (adaptive window, "
                   "compared) never fires; the acting detector, which also tests the labels' counts, finds the shift "
                   "in chunk 5, with no false alarm. Micro-F1 of all three drops at chunk 5 (from about 0.45 to "
                   "below 0.25); ELM-I (retrain) recovers first and ends with the best micro-F1.",
    "why beta matters": "β = 1, γ = 0 (no graph, no ranking term) turns ELM-O into the plain ELM's regression, on "
                        "the noise-corrected targets of its loss: the same decisions (Hamming loss and micro-F1 within "
                        "0.002), a higher average precision. On the Sweep page the best point of this stream is "
                        "β = 0.95, γ = 2⁻³, with GM about 0.08 above the defaults (β = 0.18, γ = 0.005).",
}



# --------------------------------------------------------------------------- clean labels scoring below noisy ones
@dataclass(frozen=True)
class CleanLabelGap:
    """Why a preset run with clean labels (flip rates "none") scores a lower micro-F1 than the preset with its noise:
    the numbers of the preset's two runs (its seeds; "about": tests/test_clean_labels.py states the tolerances), read
    into one sentence (:attr:`text`). ``part``: where the gap is, "before" / "after" the change or the "whole" run;
    ``predicted_*`` and ``true`` are labels per instance there; ``default_*`` the micro-F1 of the same runs at the
    package's default decision rule (``default_rule``)."""

    model: str
    f1_clean: float
    f1_noisy: float
    part: str
    predicted_clean: float
    true: float
    predicted_noisy: float
    default_clean: float
    default_noisy: float
    default_rule: str = "f1-bounded"

    @property
    def text(self) -> str:
        where = {"before": " before the change", "after": " after the change", "whole": ""}[self.part]
        return (f"Clean labels score lower here ({self.model}'s micro-F1 about {self.f1_clean:.2f}, with the noise "
                f"{self.f1_noisy:.2f}) because of the paper's threshold 0, not the labels: it predicts a label only "
                f"where it is more likely relevant than not, which few scores say{where} ({self.predicted_clean:g} "
                f"labels predicted per instance, {self.true:g} true), while the noise lowers that bar on the labels it "
                f"flips to positive more often ({self.predicted_noisy:g} predicted); with the decision rule "
                f"{self.default_rule} clean labels score higher ({self.default_clean:.2f} against "
                f"{self.default_noisy:.2f}; docs/clean-vs-noisy.md).")


#: The presets whose run with clean labels scores below the run with their noise (docs/clean-vs-noisy.md, every
#: preset and rule): why, said beside the summary of such a run (:func:`clean_labels_note`). Every other preset's
#: clean labels score at least as well (tests/test_clean_labels.py).
CLEAN_LABEL_GAPS = {
    "concept growth": CleanLabelGap("ELM-O", 0.13, 0.26, "before", 0.02, 1, 0.29, 0.59, 0.55),
    "concept reduction": CleanLabelGap("ELM-I", 0.46, 0.48, "after", 0.23, 1, 0.47, 0.59, 0.53),
    "label shift": CleanLabelGap("ELM-O", 0.25, 0.32, "whole", 0.54, 2, 1.1, 0.46, 0.44),
}


def _without_noise(cfg):
    """``cfg`` with flip rates "none" and the settings that only shape the noise at their defaults."""
    default = RunConfig()
    return RunConfig(**{**cfg.to_dict(), "noise": "none", "rho_low": default.rho_low, "rho_high": default.rho_high,
                        "rho_pos": [], "rho_neg": []})


def clean_labels_note(cfg) -> str | None:
    """The sentence of :data:`CLEAN_LABEL_GAPS` for a run of ``cfg`` when it is such a preset with clean labels (flip
    rates "none", every other setting the preset's); None otherwise."""
    if getattr(cfg, "noise", None) != "none":
        return None
    mine = _without_noise(cfg)
    return next((gap.text for name, gap in CLEAN_LABEL_GAPS.items() if _without_noise(PRESETS[name]) == mine), None)

# --------------------------------------------------------------------------- guided lessons (presentation mode)
@dataclass(frozen=True)
class StepAction:
    """What a step asks a teacher to change, one click away in presentation mode (where the sidebar is hidden):
    a button ``label`` that sets ``settings`` (``(field, value)`` pairs of :class:`ncld_core.config.RunConfig`,
    the other settings kept), or a link to another page of the lab (``page``: its file under ``dashboard/views``)."""

    label: str
    settings: tuple[tuple[str, object], ...] = ()
    page: str | None = None


@dataclass(frozen=True)
class LessonStep:
    """One step of a lesson: its ``title``, its ``text`` (Markdown), the ``panel`` it opens (a key of
    :data:`dashboard.panels.PANELS`: every step names its own, whatever was on screen before) and the
    ``actions`` that put what its text asks a teacher to change within reach."""

    title: str
    text: str
    panel: str
    actions: tuple[StepAction, ...] = ()


@dataclass(frozen=True)
class Lesson:
    """A preset as a short lecture: the setting, what to watch, then what the run on screen measured.

    ``steps`` are written beforehand; the last step is :meth:`measured_step`, its sentence read from the run
    (``measure``: a :class:`ncld_core.eval.runner.RunResult` and its stream to a sentence), never from these texts.
    Steps are numbered from 1, as in the link (``?lesson=<slug>&step=<k>``).

    ``assumes``: the settings the written steps state, held at the preset's values (names of
    :data:`dashboard.lesson_guard.ASPECTS`); what they fill in from the settings (:func:`step_words`: the change's
    place, the chunk size, a range's flip rates, the trusted sample) follows the controls instead. Presentation mode
    shows a run under the lesson only when it agrees with both (:func:`dashboard.lesson_guard.verdict`).
    """

    slug: str
    preset: str
    steps: tuple[LessonStep, ...]
    measure: Callable[[object, object], str]
    panel: str = "summary"  # shown with the measured step
    assumes: tuple[str, ...] = ()

    @property
    def n_steps(self) -> int:
        return len(self.steps) + 1

    def step(self, k: int, result=None, stream=None, cfg=None) -> LessonStep:
        """Step ``k`` (1-based, clamped to the lesson); the last one measured on ``result`` (None: not run).
        The written steps name the change where ``cfg`` (default: the lesson's preset) puts it: a link may move
        it or change the chunk size, and presentation mode hides the sidebar that would say so.

        >>> from ncld_core.config import PRESETS, RunConfig
        >>> growth = LESSONS["concept-growth"]
        >>> growth.step(1).text.startswith("Single-label instances first, multi-label from instance 2500 (chunk 10)")
        True
        >>> moved = RunConfig(**{**PRESETS["concept growth"].to_dict(), "chunk_size": 100})
        >>> "fire at chunk 25, and nowhere else" in growth.step(3, cfg=moved).text
        True
        """
        k = min(max(int(k), 1), self.n_steps)
        if k > len(self.steps):
            return self.measured_step(result, stream)
        written = self.steps[k - 1]
        return replace(written, text=written.text.format_map(step_words(cfg or PRESETS[self.preset])))

    def written_texts(self, cfg) -> tuple[str, ...]:
        """The written steps' texts as the settings ``cfg`` fill them in (two settings that give the same texts
        are the same to the lesson's words)."""
        return tuple(self.step(k, cfg=cfg).text for k in range(1, len(self.steps) + 1))

    def measured_step(self, result, stream=None) -> LessonStep:
        if result is None or not any(c.metrics for c in result.chunks):
            return LessonStep("What this run shows", "Press **Run**: this step reads its sentence from the run "
                              "on screen (no scored chunk yet).", self.panel)
        partial = "" if result.complete else f" (the run {result.status}: partial numbers)"
        return LessonStep("What this run shows" + partial, self.measure(result, stream), self.panel)


def step_words(cfg) -> dict:
    """The words a lesson's written steps fill in from the settings ``cfg``: where its change is (``{at}``,
    ``{chunk}``, ``{size}``: the first positioned change point and the chunk size), the flip rates of a range
    (``{rates}``) and the trusted sample (``{trusted}``, a sentence); said generally when a setting is unknown (the
    paper's unpositioned form, an emptied box).

    >>> from ncld_core.config import RunConfig
    >>> words = step_words(RunConfig(schedule="growth@1000", rho_low=0.1, rho_high=0.3, trusted_fraction=0.05))
    >>> words["at"], words["rates"], words["trusted"]
    ('instance 1000 (chunk 4)', 'U[0.1, 0.3]', 'A user has checked 5 % of each chunk by hand: the trusted sample.')
    """
    try:
        positions = [p for p in (cfg.drift_schedule.positions if cfg.drift_schedule else ()) if p is not None]
    except ValueError:  # an unreadable schedule: its error is under its control
        positions = []
    size = cfg.chunk_size if isinstance(cfg.chunk_size, int) and cfg.chunk_size > 0 else None
    rates = (f"U[{cfg.rho_low:g}, {cfg.rho_high:g}]" if cfg.noise == "range" and all(
        isinstance(r, (int, float)) for r in (cfg.rho_low, cfg.rho_high)) else "the set rates")
    share = cfg.trusted_fraction if isinstance(cfg.trusted_fraction, (int, float)) else 0
    trusted = (f"A user has checked {100 * share:g} % of each chunk by hand: the trusted sample." if share > 0
               else "Nobody has checked any instance by hand: the trusted sample is 0.")
    words = {"rates": rates, "trusted": trusted}
    if positions and size:
        chunk = f"chunk {change_chunks(positions[:1], size)[0]}"
        return words | {"at": f"instance {positions[0]} ({chunk})", "chunk": chunk, "size": str(size)}
    return words | {"at": "the change point", "chunk": "the change's chunk", "size": str(size) if size else "N"}


def _firings(result, model: str) -> list[int]:
    return [c.chunk for c in result.chunks if model in c.diagnostics and c.diagnostics[model].fired]


def _monitor_firings(result, model: str, name: str) -> list[int]:
    return [c.chunk for c in result.chunks if model in c.diagnostics
            and name in (c.diagnostics[model].monitors or {}) and c.diagnostics[model].monitors[name].fired]


def _chunks_text(chunks: list[int]) -> str:
    return "no chunk" if not chunks else ("chunk " if len(chunks) == 1 else "chunks ") + ", ".join(map(str, chunks))


def _scores(result, metric: str, models) -> str:
    s = result.summary()
    return ", ".join(f"{m} {s.loc[m, metric]:.3f}" for m in models if m in s.index)


def _mean_after(result, model: str, metric: str, first: int) -> float | None:
    values = [c.metrics[model][metric] for c in result.chunks if c.chunk >= first and model in c.metrics]
    return sum(values) / len(values) if values else None


def _drift_sentence(result, stream=None) -> str:
    """Where the true changes were, what the acting detector (and the compared ones) did, and micro-F1 after."""
    models = [m for m in ("ELM-O", "ELM-I", "ELM-II") if m in result.models]
    size = result.chunk_size
    changes = list(zip(change_chunks([p for p, _ in result.change_points], size),
                       [kind for _, kind in result.change_points]))
    first = changes[0][0] if changes else 0
    by_chunk = {c.chunk: c for c in result.chunks}
    text = "True change(s): " + ", ".join(f"{kind} in chunk {k}" for k, kind in changes) + ". "
    if models and first - 1 in by_chunk and first in by_chunk:
        before, at = by_chunk[first - 1], by_chunk[first]
        text += (f"True cardinality {before.true_cardinality:.2f} in chunk {first - 1}, {at.true_cardinality:.2f} "
                 f"in chunk {first}; ELM-O's estimate {before.diagnostics[models[0]].lcard_hat:.2f}, then "
                 f"{at.diagnostics[models[0]].lcard_hat:.2f}. ")
    if models:
        text += f"The acting detector fired in {_chunks_text(_firings(result, models[0]))}"
        monitors = sorted({n for c in result.chunks for n in (c.diagnostics[models[0]].monitors or {})})
        text += "".join(f"; the compared {DETECTOR_LABELS.get(n, n)} in {_chunks_text(_monitor_firings(result, models[0], n))}"
                        for n in monitors) + ". "
        after = [(m, _mean_after(result, m, "micro_f1", first + 1)) for m in models]
        text += ("Mean micro-F1 from chunk " + str(first + 1) + " on: "
                 + ", ".join(f"{m} {v:.3f}" for m, v in after if v is not None) + "; over the run: "
                 + _scores(result, "micro_f1", models) + ".")
    return text


def _clean_vs_noisy(result, stream=None) -> str:
    cost = result.noise_cost("average_precision")
    text = noise_cost_text(cost) if cost else ""
    return text + " Micro-F1: " + _scores(result, "micro_f1", result.models) + "."


def _unknown_noise(result, stream=None) -> str:
    from ncld_core.eval.cardinality_eval import interval_report
    from ncld_core.model.flip_rates import estimate_errors

    rates = (None, None) if stream is None else (stream.rho_pos, stream.rho_neg)
    over_time, _ = estimate_errors(result.chunks, "ELM-O", *rates)
    text = ""
    if rates[0] is not None and len(over_time):
        last = over_time.iloc[-1]
        text = (f"At the last chunk the estimated flip rates are off by {last['mae_rho_neg']:.3f} (ρ−) and "
                f"{last['mae_rho_pos']:.3f} (ρ+) on average. ")
    rows = [(c.true_cardinality, c.diagnostics["ELM-O"]) for c in result.chunks if "ELM-O" in c.diagnostics]
    band = interval_report([t for t, _ in rows], [r.lcard_low for _, r in rows], [r.lcard_high for _, r in rows])
    if band["n"] and rows[-1][1].n_trusted and rows[-1][1].lcard_identified:
        text += (f"With {rows[-1][1].n_trusted} checked instances (the trusted sample) the cardinality band is a "
                 f"95 % interval, {band['width']:.2f} labels per instance wide on average (true cardinality "
                 f"{band['truth']:.2f}), holding the truth in {band['inside']} of {band['n']} chunks. Set the "
                 f"trusted sample to 0 to see what the noisy labels alone allow: the identified set, far wider.")
    elif band["n"]:
        text += (f"The cardinality band, the identified set, is {band['width']:.2f} labels per instance wide on "
                 f"average (true cardinality {band['truth']:.2f}) and holds the truth in {band['inside']} of "
                 f"{band['n']} chunks: wide, because the noisy labels alone cannot say more. With a trusted "
                 f"sample of a few checked instances per chunk the band becomes a 95 % interval instead.")
    return text


def _why_beta(result, stream=None) -> str:
    s = result.summary()
    # The same decisions: Hamming loss and micro-F1 within 0.002 (ELM-O regresses the noise-corrected targets,
    # the plain ELM the noisy labels: their scores differ, their thresholded predictions hardly).
    same = all(m in s.index for m in ("ELM-O", "ELM (plain)")) and all(
        abs(s.loc["ELM-O", m] - s.loc["ELM (plain)", m]) <= 0.002 for m in ("hamming_loss", "micro_f1"))
    return (f"ELM-O at these β, γ and the plain ELM: Hamming loss {_scores(result, 'hamming_loss', ['ELM-O', 'ELM (plain)'])}; "
            f"micro-F1 {_scores(result, 'micro_f1', ['ELM-O', 'ELM (plain)'])}; average precision "
            f"{_scores(result, 'average_precision', ['ELM-O', 'ELM (plain)'])}: "
            + ("the same decisions; the ranking differs: ELM-O regresses the noise-corrected targets." if same
               else "they differ."))


def _watch_drift(what: str) -> LessonStep:
    return LessonStep("What to watch", what, "timeline")


# One lesson per preset (each written on its own: a lesson names the panels of its steps, and only
# dashboard/panels.py lists the panels). ``assumes``: the settings each one's written steps state (every step's
# words checked against them: tests/test_lesson_guard.py); the dataset and the models in every one.
_LESSON_CLEAN_VS_NOISY = Lesson("clean-vs-noisy", "clean vs noisy", (
    LessonStep("The setting", "Labels flipped at rates drawn from {rates} per label. Three models on the "
               "same stream: **ELM-O** (the learner, told the flip rates), the **plain ELM** (no correction), "
               "and an **oracle** ELM-O trained on the clean labels, which no learner has: it only measures "
               "what the noise costs. The decision rule is the paper's threshold 0.", "metrics"),
    LessonStep("What to watch", "Panel (a): average precision of the three. The gap between the oracle and the "
               "plain ELM is what the noise costs; how much of it ELM-O wins back is what the correction "
               "buys. Then micro-F1: does it show the cost at all?", "metrics"),
), _clean_vs_noisy, assumes=("dataset", "noisy", "changes", "models", "model_rates", "decision"))

_LESSON_CONCEPT_GROWTH = Lesson("concept-growth", "concept growth", (
    LessonStep("The setting", "Single-label instances first, multi-label from {at}. The "
               "learners are never told where. ELM-O only records the detector's firings, ELM-I retrains "
               "and ELM-II adjusts when it fires.", "metrics"),
    LessonStep("What to watch", "Panel (b): does the cardinality estimate jump with the truth at {chunk} "
               "while the observed (noisy) cardinality rises by less than half as much (the noise flips part of "
               "the change away)?", "cardinality"),
    _watch_drift("Panel (d): does the acting detector fire at {chunk}, and nowhere else? Then panel (a): "
                 "which variant recovers its micro-F1 first?"),
), _drift_sentence, "metrics", assumes=("dataset", "noise", "changes", "models"))

_LESSON_CONCEPT_REDUCTION = Lesson("concept-reduction", "concept reduction", (
    LessonStep("The setting", "The reverse of growth: multi-label first, single-label from {at}.", "metrics"),
    _watch_drift("Panel (d): the firing at {chunk}. Then the summary: which variant has the lowest Hamming "
                 "loss, which the lowest micro-F1, and why those can be the same variant."),
), _drift_sentence, assumes=("dataset", "changes", "models"))

_LESSON_LABEL_SHIFT = Lesson("label-shift", "label shift", (
    LessonStep("The setting", "In chunks of {size} instances, from {at} other labels are relevant, **as many as "
               "before**: "
               "the label cardinality does not change. The acting detector tests the cardinality and the "
               "labels' counts; a cardinality-only test (adaptive window) is run beside it, only recorded.",
               "metrics"),
    LessonStep("What to watch", "Panel (b): the true cardinality stays flat across {chunk}, so no "
               "cardinality test can see this change.", "cardinality"),
    _watch_drift("Panel (c) and (d): which detector crosses its threshold from {chunk} on, and which never "
                 "does? Then panel (a): what the shift does to micro-F1, and who recovers."),
), _drift_sentence, "metrics", assumes=("dataset", "changes", "models", "detector", "monitors"))

_LESSON_UNKNOWN_NOISE = Lesson("unknown-noise", "unknown noise: estimate the rates", (
    LessonStep("The setting", "Missing labels, the noise real data has: annotators skip relevant labels (ρ+ "
               "about 0.2) far more often than they add irrelevant ones. ELM-O is told nothing: it estimates ρ− "
               "from the instances it scores lowest, and bounds ρ+ from above (a value would need instances "
               "surely positive). {trusted}", "rates"),
    LessonStep("What to watch", "Panel (e): how close the estimated rates come to the true ones, ρ− against "
               "ρ+.", "rates"),
    LessonStep("What to watch", BANDS["trusted"] + " " + BANDS["point"], "cardinality"),
    LessonStep("Without a checked instance", "Set the trusted sample to 0 and run again. " + BANDS["identified"]
               + " How much wider is the band, and what does holding the truth mean then?", "cardinality",
               (StepAction("Set the trusted sample to 0", settings=(("trusted_fraction", 0.0),)),)),
), _unknown_noise, "cardinality", assumes=("dataset", "noise", "changes", "models", "model_rates"))

_LESSON_WHY_BETA_MATTERS = Lesson("why-beta-matters", "why beta matters", (
    LessonStep("The setting", "β = 1, γ = 0: no graph term, no ranking term. ELM-O then solves the plain "
               "ELM's problem, on the noise-corrected targets of its loss.", "metrics"),
    LessonStep("What to watch", "The summary: ELM-O against the plain ELM, metric by metric. Then the Sweep "
               "page, to see where β and γ do matter.", "summary", (StepAction("Open the Sweep page", page="sweep.py"),)),
), _why_beta, assumes=("dataset", "changes", "models", "model_rates", "beta", "gamma"))

#: The presets as lessons, by the slug a link names them with (``?lesson=concept-growth&step=2``).
LESSONS = {lesson.slug: lesson for lesson in (_LESSON_CLEAN_VS_NOISY, _LESSON_CONCEPT_GROWTH, _LESSON_CONCEPT_REDUCTION, _LESSON_LABEL_SHIFT, _LESSON_UNKNOWN_NOISE, _LESSON_WHY_BETA_MATTERS)}
#: The lesson of each preset.
PRESET_LESSONS = {lesson.preset: lesson.slug for lesson in LESSONS.values()}
