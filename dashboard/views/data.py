"""Datasets & stream: what is available, and what the configured stream looks like before a run."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import data, upload_view
from dashboard.figures import schedule_figure
from dashboard.labels import errors_text
from dashboard.ui import guarded, md_escape

ss = st.session_state
ctx = ss["ctx"]
cfg = ctx.cfg

st.markdown("## Datasets & stream")
listing, error = data.list_datasets()
if error:
    st.error(md_escape(error), icon=":material/error:")
st.markdown("##### Benchmarks found in `data/` and `$NCLD_DATA_DIR`")
if listing.empty:
    st.info("No benchmark dataset found. Put MULAN / MEKA files in data/ or point NCLD_DATA_DIR at them; "
            "the synthetic generator always works, and any ARFF can be uploaded from the sidebar.")
else:
    cols = [c for c in ("name", "instances", "features", "labels", "cardinality", "sparse", "verified",
                        "paper_name", "paper_instances", "paper_features", "paper_labels", "paper_cardinality",
                        "error") if c in listing.columns]
    shown = listing[cols].copy()
    for c in (c for c in cols if c.startswith("paper_")):  # as text: "–" where the paper does not list it
        shown[c] = [("–" if pd.isna(v) else f"{v:g}" if isinstance(v, float) else str(v)) for v in shown[c]]
    st.dataframe(shown, hide_index=True, width="stretch")
    st.caption("paper_*: the ELM-NCLD paper's Table I where it lists the dataset (– where it does not); the "
               "files' versions differ from the paper's in places, so its numbers are anchors, not targets.")

parsing = data.upload_job()
if parsing is not None and parsing.active:  # the sidebar's upload, waiting for a slot of the server or being read
    st.markdown("##### Your upload")
    upload_view.show(parsing, "data")

st.markdown("##### The configured stream")
if not ctx.ok:
    st.warning(f"Fix the sidebar's settings to preview the stream: {errors_text(ctx.errors)}", icon=":material/block:")
else:
    if st.button("Build the stream", icon=":material/construction:", key="data_build"):
        ss["data_preview"] = True
    stream = None
    if ss.get("data_preview"):
        problem = st.empty()  # an error of the build is said here, under the button
        with guarded("building the stream", slot=problem):
            try:  # the dataset through the one resolver (dashboard.data.resolve), as the controls found it
                data.resolve(cfg.dataset, ctx.upload)
                stream = data.build_stream(cfg, ctx.upload)
            except ValueError as exc:
                problem.error(md_escape(exc), icon=":material/error:")
        if stream is not None:
            m = st.columns(5)
            m[0].metric("instances", stream.n_instances)
            m[1].metric("chunks", stream.n_chunks(cfg.chunk_size))
            m[2].metric("labels", stream.n_labels)
            m[3].metric("true cardinality", f"{stream.true_cardinality():.3f}")
            m[4].metric("observed cardinality", f"{stream.observed_cardinality():.3f}")
            points = [(cp.position, cp.kind) for cp in stream.change_points]
            st.plotly_chart(schedule_figure(points, stream.n_instances, height=150), key="data_schedule",
                            config={"displayModeBar": False})
            bounds = [0] + [p for p, _ in points] + [stream.n_instances]
            rows = []
            for a, b in zip(bounds[:-1], bounds[1:]):
                rows.append({"from": a, "to": b, "true cardinality": stream.true_cardinality(a, b),
                             "observed (noisy) cardinality": stream.observed_cardinality(a, b)})
            st.dataframe(pd.DataFrame(rows), hide_index=True)
            if stream.rho_pos is not None and (any(stream.rho_pos) or any(stream.rho_neg)):  # (noise "none": no rates)
                names = list(stream.label_names) or [f"label_{j}" for j in range(stream.n_labels)]
                rates = pd.DataFrame({"label": names, "rho_pos (lose)": stream.rho_pos, "rho_neg (add)": stream.rho_neg})
                with st.expander(f"Flip rates of the {stream.n_labels} labels (Eq. NR)"):
                    st.dataframe(rates, hide_index=True, width="stretch")
