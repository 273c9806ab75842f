"""Per-student rate limit on uploads: a sliding window of the last minute, in memory (or in the gradebook)."""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path

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


class SharedUploadRate:
    """UploadRate for `serve --workers`: the window kept in the gradebook file, so a student's uploads
    count the same whichever web worker takes them (wall-clock seconds: the workers share no clock)."""

    def __init__(self, path: Path, per_minute: int, clock: Callable[[], float] = time.time):
        self.per_minute = per_minute
        self.clock = clock
        self.db = sqlite3.connect(path, timeout=60.0, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock, self.db:
            self.db.execute("CREATE TABLE IF NOT EXISTS upload_rate (who TEXT NOT NULL, at REAL NOT NULL)")
            self.db.execute("CREATE INDEX IF NOT EXISTS upload_rate_by_who ON upload_rate (who, at)")

    def allow(self, who: str) -> int:
        """0 when `who` may upload now (counted), else the seconds until they may."""
        now = self.clock()
        with self._lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")  # no other worker counts between our count and our insert
            self.db.execute("DELETE FROM upload_rate WHERE who = ? AND at <= ?", (who, now - WINDOW))
            seen = [float(r[0]) for r in self.db.execute(
                "SELECT at FROM upload_rate WHERE who = ? ORDER BY at", (who,))]
            if len(seen) >= self.per_minute:
                return max(1, math.ceil(seen[0] + WINDOW - now))
            self.db.execute("INSERT INTO upload_rate (who, at) VALUES (?, ?)", (who, now))
            return 0

    def close(self) -> None:
        self.db.close()
