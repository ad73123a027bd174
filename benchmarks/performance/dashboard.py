"""Section 5: the dashboard's timings, as the browser test wrote them (this benchmark starts no browser)."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from benchmarks.common import REPO, md_table
from benchmarks.performance.formatting import target_row
from benchmarks.performance.protocol import DASHBOARD_TIMING, TARGETS


def _find_numbers(obj, prefix="", kind=(int, float)):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _find_numbers(v, f"{prefix}.{k}" if prefix else str(k), kind)
    elif isinstance(obj, kind) and not isinstance(obj, bool):
        yield prefix, (obj if kind is str else float(obj))


def dashboard_timing(path=DASHBOARD_TIMING) -> dict:
    """Numbers of the browser test's ``dashboard_timing.json`` (any layout), or ``{"missing": True}``."""
    path = Path(path)
    if not path.is_file():
        return {"missing": True, "path": str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)}
    try:
        data = json.loads(path.read_text())
    except Exception as exc:
        return {"missing": True, "error": f"unreadable: {exc}", "path": str(path)}
    numbers = dict(_find_numbers(data))
    stamp = None
    if isinstance(data, dict):
        for key in ("timestamp", "generated_at", "created_at", "date", "time", "when"):
            if key in data and isinstance(data[key], str):
                stamp = data[key]
                break
    mtime = _dt.datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat(timespec="seconds")

    # the brief's scenario is medical: prefer entries that name it, then any other
    order = sorted(numbers, key=lambda k: 0 if "medical" in k.lower() else 1)

    def pick(*words, exclude=()):
        for key in order:
            value = numbers[key]
            low = key.lower()
            if all(w in low for w in words) and not any(e in low for e in exclude):
                in_ms = low.endswith("ms") or "_ms" in low or "millis" in low
                seconds = value / 1000.0 if in_ms else value
                return key, seconds
        return None, None

    # the user-facing (browser) time to the first plot if there is one; the per-chunk *update*
    for key_words in (("first", "browser"), ("first",), ("plot",)):
        first_key, first_s = pick(*key_words)
        if first_key:
            break
    # The per-chunk update as the user sees it: the browser's interval between chunks (compute and
    # render), the slowest scenario; older files have only the server's render time.
    intervals = {k: v / 1000.0 for k, v in numbers.items() if "interval" in k.lower() and "browser" in k.lower()}
    if intervals:
        upd_key = max(intervals, key=intervals.get)
        upd_s = intervals[upd_key]
    else:
        for key_words in (("median", "update"), ("update",), ("median",)):
            upd_key, upd_s = pick(*key_words, exclude=("first",))
            if upd_key:
                break
    scope = upd_key.rsplit(".", 1)[0] if upd_key and "." in upd_key else ""
    others = {
        k: v for k, v in numbers.items() if "median" in k.lower() and k != upd_key and k.startswith(scope)
    }
    return {
        "missing": False,
        "path": str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path),
        "timestamp": stamp,
        "mtime": mtime,
        "numbers": numbers,
        "strings": dict(_find_numbers(data, kind=str)),
        "first_plot": (first_key, first_s),
        "update": (upd_key, upd_s),
        "other_medians": others,
    }


def dashboard_latency_section(dash: dict) -> list[str]:
    """The latency targets of the Live run against the browser test's measurements (``latency_<dataset>``,
    ``stop_inside_slow_chunk_*`` in ``dashboard_timing.json``): per-chunk update, Run to first plot, Stop.

    Measured by ``pytest tests/test_dashboard_browser.py -k "latency or slow_chunk"`` (Chromium, 1400 x 1000):
    the per-chunk update is the time from the status line first naming chunk k (sent before the figures) to
    every panel's figure showing chunk k, noted at each change of the page; Run to first plot from the click to all four
    panels drawn; Stop from the click to the status saying "stopped", inside a chunk of tens of seconds.
    """
    if dash.get("missing"):
        return []
    nums = dash.get("numbers", {})
    names = sorted({k.split(".")[0][len("latency_"):] for k in nums if k.startswith("latency_")})
    stops = {k.split(".")[0] for k in nums if k.startswith("stop_inside_slow_chunk")}
    if not names and not stops:
        return []
    upd, first = TARGETS["dashboard_update_ms"], TARGETS["dashboard_first_plot_s"]
    strings = dash.get("strings", {})
    L = ["", "### 5b. Live-run latency against the targets", "",
         "Measured by `pytest tests/test_dashboard_browser.py -k \"latency or slow_chunk\"` in Chromium at "
         "1400 x 1000 (browser clock): per chunk from chunk 2 on, from the status line naming chunk k (sent "
         "before the figures) to every panel showing it (its graph's `data-chunk`, set once drawn). The panels are "
         "updated in place (`dashboard/live_chart.py`): a chunk's four figures travel in one element (one render "
         "of the page), a hidden carrier whose text the page's script reads as soon as that render ends "
         "(`dashboard/figure_carrier.py`), a figure equal to the one drawn is not redrawn, and one that only adds points inside "
         "the axes' ranges is drawn as a plotly transition (the traces, not the axes, legend and hover layers; "
         "`dashboard.figures.fix_y_ranges` rounds the ranges so that they rarely move). Chunk 1's draw mounts the "
         "four graphs and is part of Run to first plot, from the click to the four panels drawn (its own column "
         "gives the draw alone); Stop to the status saying *stopped*, inside a chunk of several seconds (enron, "
         "L = 4000). The large datasets are cut to 13 chunks. Emotions and medical (3 and 4 chunks) have no per-chunk "
         "update: they compute faster than the page draws them, and the page's rerun after the run's end draws "
         "their last chunks under an empty status line (`UNMEASURABLE` in that test file), so they are not in this table. *Parsed cache* says whether the dataset had been "
         "parsed before the page was opened; the page reads the selected dataset before Run either way "
         "(`dashboard/controls.py`), so a first read's parse (section 5c) is not in Run to first plot.", "",
         f"| dataset | per-chunk update, median ms (target {upd:.0f}) | p90 ms | chunks measured | "
         f"chunk 1 draw ms | Run to first plot, s (target {first:g}) | parsed cache |",
         "|---|---|---|---|---|---|---|"]
    for n in names:
        g = lambda f: nums.get(f"latency_{n}.{f}")  # noqa: E731
        med, fp, mount = g("median_ms"), g("run_to_first_plot_s"), g("first_draw_ms")
        ok = lambda v, t: "–" if v is None else f"{v:g} {'(met)' if v <= t else '(missed)'}"  # noqa: E731
        shown = lambda v: "–" if v is None else f"{v:g}"  # noqa: E731
        L.append(f"| {n} | {ok(med, upd)} | {shown(g('p90_ms'))} | {g('chunks_measured'):.0f} | {shown(mount)} | "
                 f"{ok(fp, first)} | {strings.get(f'latency_{n}.parsed_cache', '–')} |")
    for key in sorted(stops):
        s_, b, load = nums.get(f"{key}.stop_s_browser"), nums.get(f"{key}.bound_s"), nums.get(f"{key}.load_per_core")
        L += ["", f"Stop inside a slow chunk ({key[len('stop_inside_slow_chunk_'):]}): {s_:g} s "
                  f"(target 1 s; the test's bound {b:g} s at a load of {load:g} runnable processes per core)."]
    return L


def per_dataset_latency(dash: dict) -> dict:
    """``{dataset: (median per-chunk update ms, Run to first plot s)}`` from the browser test's ``latency_*``."""
    nums = dash.get("numbers", {})
    names = sorted({k.split(".")[0][len("latency_"):] for k in nums if k.startswith("latency_")})
    return {n: (nums.get(f"latency_{n}.median_ms"), nums.get(f"latency_{n}.run_to_first_plot_s")) for n in names}


def latency_target_rows(per: dict, dash: dict, first_plot: str, update: str) -> list:
    """The two dashboard targets over every dataset the browser test measured: the worst one decides."""
    rows = []
    for what, idx, target, unit in ((first_plot, 1, TARGETS["dashboard_first_plot_s"], " s"),
                                    (update, 0, TARGETS["dashboard_update_ms"], " ms")):
        vals = {n: v[idx] for n, v in per.items() if v[idx] is not None}
        if not vals:
            rows.append(target_row(what, "no measurement in the file", None, None))
            continue
        worst = max(vals, key=vals.get)
        met = sum(v <= target for v in vals.values())
        txt = (f"worst {vals[worst]:g}{unit} ({worst}); met on {met} of {len(vals)} datasets (section 5b, file of "
               f"{dash['timestamp'] or dash['mtime']})")
        rows.append(target_row(what, txt, vals[worst], target, False, unit))
    return rows


def render(dash: dict) -> list[str]:
    """Sections 5 and 5b of the report."""
    L = ["", "## 5. Dashboard", ""]
    if dash.get("missing"):
        L.append(
            f"Not measured in this run: `{dash.get('path')}` (written by the browser test) does not exist"
            + (f" ({dash['error']})" if dash.get("error") else "")
            + "; this benchmark does not start a browser."
        )
    else:
        L += [
            f"From `{dash['path']}` (written by the browser test, not by this run): timestamp "
            f"{dash['timestamp'] or 'none in the file'}, file modified {dash['mtime']}.",
            "",
            md_table(["field", "value"], [[k, f"{v:g}"] for k, v in dash["numbers"].items()]
                     + [[k, v] for k, v in dash.get("strings", {}).items()]),
        ]
    L += dashboard_latency_section(dash)
    return L


def target_rows(dash: dict) -> list[list[str]]:
    """The dashboard's two targets: Run to first plot and the per-chunk update (the worst dataset decides)."""
    rows = []
    first_plot = f"dashboard: Run to first plot <= {TARGETS['dashboard_first_plot_s']:.0f} s"
    update = f"dashboard: per-chunk update in the browser <= {TARGETS['dashboard_update_ms']:.0f} ms"
    if dash.get("missing"):
        rows += [target_row(first_plot, "not measured in this run", None, None),
                 target_row(update, "not measured in this run", None, None)]
    elif per_dataset := per_dataset_latency(dash):
        rows += latency_target_rows(per_dataset, dash, first_plot, update)
    else:
        k, s = dash["first_plot"]
        txt = f"{s:.2f} s (`{k}`, file of {dash['timestamp'] or dash['mtime']})" if k else "no such field in the file"
        rows.append(target_row(first_plot, txt, s, TARGETS["dashboard_first_plot_s"], False, " s"))
        k, s = dash["update"]
        ms = None if s is None else s * 1e3
        txt = f"{ms:.0f} ms (`{k}`)" if k else "no such field in the file"
        if dash.get("other_medians"):
            txt += "; also recorded: " + ", ".join(f"`{ok}` = {ov:g}" for ok, ov in dash["other_medians"].items())
        rows.append(target_row(update, txt, ms, TARGETS["dashboard_update_ms"], False, " ms"))
    return rows
