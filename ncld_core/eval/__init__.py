"""Evaluation: variants, baselines and references, metrics, drift scoring, the prequential runner, the sweep.

* :mod:`~ncld_core.eval.variants` -- ELM-O / ELM-I / ELM-II, the oracle and the references by name;
* :mod:`~ncld_core.eval.references` -- all-negative, noisy-prior;
* :mod:`~ncld_core.eval.baselines` -- the paper's baselines and the peers;
* :mod:`~ncld_core.eval.metrics` -- multi-label metrics and their accumulator;
* :mod:`~ncld_core.eval.drift_eval` -- detection scores against the planted changes;
* :mod:`~ncld_core.eval.runner` -- the prequential runner (``iter_run``: one record per chunk);
* :mod:`~ncld_core.eval.sweep` -- the beta x gamma sensitivity sweep;
* :mod:`~ncld_core.eval.compare` -- coinciding curves, settings that differ between runs, final scores.
"""
