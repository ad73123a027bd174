"""The carrier of a live draw's figures: a hidden HTML element whose text is the draw's payload (JSON).

:func:`dashboard.live_chart.draw_charts` sends it as an ``st.html`` element; the live panels' script
(``dashboard/static/live_chart.js``) takes each new carrier's text as soon as the page shows it, and draws the
figures into their mounts. Why a carrier and not the component's own data: :mod:`dashboard.live_chart`.
Side-effect free (no Streamlit call): the tests and the websocket visitor of ``benchmarks/`` read what a page
was sent with :func:`carried`.
"""

from __future__ import annotations

import html
import json

__all__ = ["CARRIER_CLASS", "carried", "carrier_html"]

#: The class of the carrier's element, which the component's script looks for (``static/live_chart.js``).
CARRIER_CLASS = "ncld-figures"
_CARRIER_OPEN = f'<div hidden class="{CARRIER_CLASS}">'


def carrier_html(payload: dict) -> str:
    """The HTML that carries a draw's ``payload`` (figures, config, chunk, owner) to the page: a hidden element
    whose text is the payload's JSON, escaped (the figures hold names from uploaded files; the page reads the
    element's text, never its markup).

    >>> body = carrier_html({"figures": {"a": '{"data": [{"name": "<b>&"}]}'}, "chunk": 3})
    >>> body.startswith('<div hidden class="ncld-figures">') and "<b>" not in body
    True
    >>> carried(body)["chunk"], carried(body)["figures"]["a"]
    (3, '{"data": [{"name": "<b>&"}]}')
    """
    return _CARRIER_OPEN + html.escape(json.dumps(payload), quote=False) + "</div>"


def carried(body: str) -> dict | None:
    """The payload of a carrier's HTML (:func:`carrier_html`), None for any other HTML (the tests' and the
    classroom benchmark's reading of what a page was sent)."""
    if not body.startswith(_CARRIER_OPEN) or not body.endswith("</div>"):
        return None
    return json.loads(html.unescape(body[len(_CARRIER_OPEN):-len("</div>")]))
