"""A Streamlit page holding only a Run button: the floor of a page's answer (``benchmarks.classroom`` serves it with
the dashboard's settings and times it as it times the dashboard's first page)."""

import streamlit as st

st.button("Run", key="run_button")
