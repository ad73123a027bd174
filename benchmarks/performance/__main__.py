"""``python -m benchmarks.performance`` (what ``python -m benchmarks`` runs); ``memory-worker`` is section 4's
fresh process (:func:`benchmarks.performance.memory.bench_memory` starts it); ``knobs ...`` measures section 8
alone (:func:`benchmarks.performance.knobs.main`: ``knobs --changes 2 --out FILE``)."""

import json
import sys

from benchmarks.performance import knobs
from benchmarks.performance.driver import main
from benchmarks.performance.memory import memory_worker

if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "knobs":
        sys.exit(knobs.main(sys.argv[2:]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "memory-worker":
        milestones = tuple(int(x) for x in sys.argv[2].split(","))
        print(json.dumps(memory_worker(milestones, float(sys.argv[3]))))
    else:
        sys.exit(main())
