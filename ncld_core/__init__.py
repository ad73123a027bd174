"""ncld_core: online multi-label classification under noisy and changing label distributions.

The model (:class:`ELMNCLD`), the stream lab (datasets, synthetic generator,
noise, drift schedules, prequential runner, metrics) and the command line.
Importing it does not import Streamlit.

>>> import ncld_core, sys
>>> "streamlit" in sys.modules
False
"""

from .config import RunConfig
from .model import ELMNCLD
from .runner import PrequentialRunner
from .stream import ChangePoint, Stream

__all__ = ["ELMNCLD", "PrequentialRunner", "RunConfig", "Stream", "ChangePoint"]
__version__ = "0.1.0"
