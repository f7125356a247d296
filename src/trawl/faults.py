"""Named durable steps where a test may kill the process, for real.

``TRAWL_FAULT_STEP=crawl_end.after_index_commit trawl crawl ...`` sends the process
SIGKILL when it reaches that step: no handler, no ``finally``, no flush runs, as
with ``kill -9`` or a power cut. tests/test_faults.py kills each step of crawl
end, evict, site delete and index rebuild, runs the command again, and checks
that store and index agree and no committed page is lost.
"""

from __future__ import annotations

import os
import signal

ENV = "TRAWL_FAULT_STEP"


def fault_point(step: str) -> None:
    """Die here when the environment names ``step``."""
    if os.environ.get(ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
