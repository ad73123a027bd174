"""``python -m benchmarks.performance`` (what ``python -m benchmarks`` runs); ``memory-worker`` is section 4's
fresh process (:func:`benchmarks.performance.memory.bench_memory` starts it)."""

import json
import sys

from benchmarks.performance.driver import main
from benchmarks.performance.memory import memory_worker

if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "memory-worker":
        milestones = tuple(int(x) for x in sys.argv[2].split(","))
        print(json.dumps(memory_worker(milestones, float(sys.argv[3]))))
    else:
        sys.exit(main())
