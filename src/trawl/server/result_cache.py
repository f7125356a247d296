"""Recent answers of /api/search and the search page, for the index commit they came from.

A results page costs milliseconds of ranking and snippet building; a repeated
request (a reload, a page back, a popular query, search as you type going back
a letter) costs a dictionary look-up. The key holds the index's commit mark, so
a crawl's commit makes every older answer unreachable (they age out): an answer
is never older than the index the next search would read. Least recently used
answers go first (256 by default: a page of 20 results on the PostgreSQL
manual holds ~10 KB of text, a few MB in all); the lock makes it safe for the route threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

Answer = dict[str, Any]


class ResultCache:
    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[Hashable, Answer] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Answer | None:
        if not self.size:
            return None
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
            return found

    def put(self, key: Hashable, answer: Answer) -> None:
        if not self.size:
            return
        with self._lock:
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)

    def __len__(self) -> int:
        return len(self._answers)
