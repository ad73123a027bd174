r"""The Live run's one-glance strip: what the label noise costs and how much the correction wins back, where the
drift was found against where it happened, whether the cardinality band held the truth, in two lines, numbers
first, above the panels (``dashboard/views/run.py`` places it, :class:`dashboard.run_panels.LivePanels` rewrites it
as chunks arrive).

Every number is :func:`ncld_core.eval.glance.glance` of the run's records so far (no math here); the clean-label
oracle and the twin ignoring the noise come from the run when it selected them, else from the models computed
beside it (``RunConfig.beside_plan``: where the memory budget allows, never drawn on the panels). What could
not be computed is said, with why; a claim never comes without its number.

>>> from ncld_core.eval.glance import Glance
>>> g = Glance(chunks=20, scored=19, learner="ELM-O", oracle=0.703, ignoring=0.622, learner_score=0.66,
...            planted=(10,), happened=(10,), found=(10, 14), detected=1, false_alarms=1, delays=(0,),
...            band_inside=18, band_chunks=20)
>>> print(*strip_text(g).split("  \n"), sep="\n")  # two lines (markdown's line break: two spaces, a new line)
**0.081** micro-F1 noise cost (oracle 0.703 − ignoring 0.622) · **47 %** won back by ELM-O
Drift at chunk **10**, found at **10, 14** (1 false alarm) · band held the truth in **18 of 20** chunks
"""

from __future__ import annotations

from ncld_core.eval.glance import GLANCE_MODELS, ORACLE, Glance, glance

from . import panels

__all__ = ["strip_text", "run_strip", "STRIP_HELP", "MAX_LISTED"]

#: Chunks listed by number in the strip; more are counted ("… +3").
MAX_LISTED = 4

#: What the strip's numbers are (its help, opened on demand).
STRIP_HELP = (
    "**Noise cost**: the clean-label oracle (ELM-O trained on the ground truth, which the learner never has) minus "
    "ELM-O ignoring the noise (told flip rates 0), in cumulative micro-F1 over the chunks scored so far; **won "
    "back**: the share of that gap the acting learner closes, (learner − ignoring) / cost. Both are computed "
    "beside the run where the server's memory budget allows, and drawn on the panels only when selected. "
    "**Drift**: the chunks of the true changes (hidden from the learner) against the chunks where the learner's "
    "drift test fired. **Band**: chunks whose true cardinality lay inside the learner's cardinality band "
    "(panel (b)).")


def _chunks(values) -> str:
    shown = ", ".join(str(v) for v in values[:MAX_LISTED])
    more = len(values) - MAX_LISTED
    return f"**{shown}**" + (f" … +{more}" if more > 0 else "")


def _noise(g: Glance, missing: dict) -> str:
    if g.scored == 0:
        return "Noise cost: from chunk 1 (chunk 0 only initialises)"
    if g.cost is None:
        absent = [m for m in GLANCE_MODELS if (m == ORACLE and g.oracle is None) or (m != ORACLE and g.ignoring is None)]
        why = sorted({missing[m] for m in absent if m in missing})
        if why == ["no label noise in this stream"]:
            return "No label noise in this stream: nothing lost to it"
        names = " and ".join("the clean-label oracle" if m == ORACLE else "the noise-ignoring twin" for m in absent)
        return f"Noise cost not computed: {names} " + (f"not run ({'; '.join(why)})" if why else "not in this run")
    cost = 0.0 if abs(g.cost) < 0.0005 else g.cost  # (never "-0.000")
    learner = "" if g.learner is None or g.learner_score is None else f" · {g.learner} {g.learner_score:.3f}"
    if not g.cost > 0:  # the oracle does no better: there is nothing to win back
        return (f"**{cost:.3f}** micro-F1 noise cost: the oracle ({g.oracle:.3f}) no better than ignoring the noise "
                f"({g.ignoring:.3f}){learner}")
    text = f"**{cost:.3f}** micro-F1 noise cost (oracle {g.oracle:.3f} − ignoring {g.ignoring:.3f})"
    if not learner:
        return text + " · no learner corrects it in this run"
    return text + f" · **{100 * g.won_back:.0f} %** won back by {g.learner}"


def _drift(g: Glance) -> str:
    if g.learner is None:
        return "No drift test in this run" if not g.happened else f"Drift at chunk {_chunks(g.happened)}, no drift test"
    alarms = f"{g.false_alarms} false alarm{'s' if g.false_alarms != 1 else ''}"
    if not g.planted:
        return ("No drift planted, no alarm" if not g.found
                else f"No drift planted; found at {_chunks(g.found)} (**{alarms}**)")
    if not g.happened:
        return f"Drift planted at chunk {_chunks(g.planted)}, not reached yet" + (f" ({alarms})" if g.found else "")
    found = f"found at {_chunks(g.found)}" if g.found else "**not found**"
    return (f"Drift at chunk{'s' if len(g.happened) > 1 else ''} {_chunks(g.happened)}, {found}"
            + (f" ({alarms})" if g.found and g.false_alarms else ""))


def _band(g: Glance) -> str:
    if g.band_chunks == 0:
        return ""
    kind = "" if g.band_kind == "interval" else " (identified set)"
    return f" · band{kind} held the truth in **{g.band_inside} of {g.band_chunks}** chunks"


def strip_text(g: Glance, missing: dict | None = None) -> str:
    """The strip's two lines (markdown) for ``g``; ``missing``: the glance's models not computed, with why
    (``LiveRun.beside_missing``)."""
    return f"{_noise(g, missing or {})}  \n{_drift(g)}{_band(g)}"


def run_strip(run, chunks) -> str:
    """The strip of ``run``'s ``chunks`` (the records the panels show): its acting learner's, the first ELM-NCLD
    variant it selected (:func:`dashboard.panels.acting_learner`)."""
    g = glance(chunks, learner=panels.acting_learner(run.models), chunk_size=run.chunk_size,
               change_positions=[p for p, _ in run.change_points])
    return strip_text(g, getattr(run, "beside_missing", None))
