"""Small presentation helpers shared by the pages."""

from __future__ import annotations

import re

import streamlit as st

from .teaching import Teaching

_MD = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text) -> str:
    """Escape Markdown (and Streamlit's ``$...$`` LaTeX, ``:color[...]`` directives) in user text."""
    return _MD.sub(r"\\\1", str(text))


def teach(info: Teaching, *, expanded: bool = False):
    """The expander with a panel's equation(s), named by the paper's label, and what to look for."""
    with st.expander(info.title, expanded=expanded, icon=":material/function:"):
        for eq in info.latex:
            st.latex(r"\small " + eq)
        st.markdown(info.text)
