"""`make bench`: every benchmark in this folder, one after another.

    .venv/bin/python bench/run.py [--quick]

Each appends its section to bench/RESULTS.md (not with --quick).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SCRIPTS = (
    "crawl_speed.py",
    "crawl_workers.py",
    "frontier_memory.py",
    "extraction.py",
    "render_cost.py",
    "relevance.py",
    "synthetic.py",
    "service.py",
    "hygiene.py",
    "dependencies.py",
)


def main() -> int:
    failed = 0
    for script in SCRIPTS:
        print(f"== {script}", flush=True)
        command = [sys.executable, str(BENCH / script), *sys.argv[1:]]
        failed |= subprocess.run(command, check=False).returncode
    return failed


if __name__ == "__main__":
    sys.exit(main())
