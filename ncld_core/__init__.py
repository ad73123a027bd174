"""ncld_core: online multi-label classification under noisy and changing label distributions.

The model (:class:`ELMNCLD`), the stream lab (datasets, synthetic generator,
noise, drift schedules, prequential runner, metrics) and the command line.
Importing it does not import Streamlit.

>>> import subprocess, sys
>>> probe = "import ncld_core, sys; print('streamlit' in sys.modules)"
>>> subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
'False'
"""

from .config import RunConfig
from .eval.runner import PrequentialRunner
from .model.elm_ncld import ELMNCLD
from .stream.stream import ChangePoint, Stream

__all__ = ["ELMNCLD", "PrequentialRunner", "RunConfig", "Stream", "ChangePoint"]
__version__ = "0.1.0"
