"""The dashboard's serving layer: how a shared server computes runs for its visitors, apart from the method.

- :mod:`~dashboard.serving.run_hub` -- the server's runs, sweeps and upload parses: a FIFO queue, one job per
  session, a run computed once and replayed; :mod:`~dashboard.serving.parse_job` -- an upload's parse as its job;
- :mod:`~dashboard.serving.live_run` -- one run's worker (start, relay chunks, Stop, status);
- :mod:`~dashboard.serving.chunk_process` -- a run advanced one chunk per request in a process of its own,
  forked by :mod:`~dashboard.serving.fork_server` and lowered below the pages by
  :mod:`~dashboard.serving.priority`; :mod:`~dashboard.serving.dask_run` -- the same on a Dask cluster;
- :mod:`~dashboard.serving.bounded_parse` -- an upload parsed in a child process with its memory capped;
  :mod:`~dashboard.serving.uploads` -- the parsed uploads, released when their last session is gone;
- :mod:`~dashboard.serving.limits` -- the server's limits (``NCLD_*``).

The library (``ncld_core``) computes a run in the caller's process and schedules nothing; none of this is in
it (``tests/test_architecture.py`` checks). Nothing here imports Streamlit, and this package imports none of
its modules: a process the fork server starts imports only what it unpickles.
"""
