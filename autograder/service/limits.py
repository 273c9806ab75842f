"""Per-student rate limit on uploads: a sliding window of the last minute, in the server's memory."""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable

WINDOW = 60.0


class UploadRate:
    """At most `per_minute` uploads per student in any 60 s; `allow` answers how long to wait."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.per_minute = per_minute
        self.clock = clock
        self._seen: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def allow(self, who: str) -> int:
        """0 when `who` may upload now (counted), else the seconds until they may."""
        now = self.clock()
        with self._lock:
            seen = self._seen[who]
            while seen and seen[0] <= now - WINDOW:
                seen.popleft()
            if len(seen) >= self.per_minute:
                return max(1, math.ceil(seen[0] + WINDOW - now))
            seen.append(now)
            return 0
