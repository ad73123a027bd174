"""Speed and memory of ELM-NCLD, against the paper's Woodbury update and River (``make bench``).

Run ``python -m benchmarks`` (``make bench``): it measures everything below in one run,
prints the report and writes it atomically to ``docs/performance.md``.  ``--quick`` is a
smaller run (about a minute) written to ``benchmarks/out/performance-quick.md``.

What is measured (chunks of N = 500 unless stated; the paper's noise, rho ~ U[0.2, 0.4] per
label, with the true rates given to the model), one module per section:

1. throughput of the full per-chunk update of :class:`ncld_core.model.ELMNCLD` with its
   default parameters -- ``decision_function`` on the chunk, then ``partial_fit`` -- on
   enron, corel16k001 and rcv1subset5: median over chunks after one warm-up chunk, the
   stream repeated until there are enough timed chunks (:mod:`.throughput`);
2. on the same chunks, the paper-literal Woodbury update
   (:mod:`benchmarks.woodbury_reference`) against ``ELMNCLD(hessian="paper")`` at the same
   parameters (the same model), and River's binary relevance of logistic regressions
   (:mod:`benchmarks.river_reference`) on a few chunks of enron and rcv1subset5 (:mod:`.throughput`);
3. growth of the per-chunk time with N (corel16k001) and with d (synthetic sparse data) (:mod:`.scaling`);
4. resident memory after 10^4, 10^5, 10^6 instances of the synthetic stream (in a fresh
   process, so nothing else the benchmark loaded counts) (:mod:`.memory`);
5. the dashboard timings written by the browser test, if present (:mod:`.dashboard`); loading a
   dataset, and the graph's Gram product (:mod:`.loading`);
6. the targets of the issue, met or missed (:mod:`.report`), and a cProfile of ``partial_fit``
   (:mod:`.profiling`);
7. the thread setting under load (:mod:`benchmarks.threads`);
8. the default stream explored in Chromium: a moved knob to its run's first plot, the per-chunk update and the
   stream's readiness, as the page times them (:mod:`.knobs`; this one starts a dashboard server and a browser).

:mod:`.protocol` holds the settings and targets, :mod:`.chunks` the data and the timing of one
chunk, :mod:`.machine` the machine's facts, :mod:`.driver` the run and the command line.

The timing loops here call ``decision_function`` and ``partial_fit`` themselves, not the
prequential runner: they time the two apart, interleave several models chunk by chunk and cycle
a dataset's chunks until enough are timed, none of which is a prequential run.

Only the public API of :mod:`ncld_core` is used, so a re-run measures the current code.
"""

from benchmarks.performance.chunks import chunk_list, noisy_dataset
from benchmarks.performance.driver import main, run
from benchmarks.performance.report import render

__all__ = ["main", "run", "render", "noisy_dataset", "chunk_list"]
