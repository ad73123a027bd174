"""``python -m benchmarks`` (``make bench``): see :mod:`benchmarks.performance`."""

import sys

from benchmarks.performance import main

if __name__ == "__main__":
    sys.exit(main())
