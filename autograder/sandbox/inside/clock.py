"""The clock a task's time limit is counted on: its own time, not the time a busy machine made it wait.

A wall-clock limit punishes the machine: with both cores busy, correct code that needs 3 s of
CPU takes 20 s of wall time. Linux tells, per thread, how long it waited in the run queue for a
CPU (`/proc/<pid>/schedstat`, its second field): the task is charged the wall time less that
wait, so its running time and its sleeping time count (a `time.sleep` loop is still stopped at
the limit) but its waiting for a CPU does not. Self-made contention (threads or processes of its
own that keep its main thread waiting) could stretch that without end, so the wall time a task
may take is capped at MAX_STRETCH times its limit. Where there is no schedstat (Windows, macOS,
a kernel without it) the clock is the wall clock.

Imports nothing of the kit: it runs inside the sandbox and in the student's self-check alike.
"""

from __future__ import annotations

import time

# At most this many times a task's limit in wall time, however busy the machine (load 12 on
# 2 cores leaves a process about 1/6 of a CPU).
MAX_STRETCH = 8.0


def run_delay(pid: int) -> float | None:
    """Seconds thread `pid` has waited for a CPU since it started; None where the kernel does not say."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as handle:
            fields = handle.read().split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class TaskClock:
    """Seconds charged to process `pid` since the clock started (or was resumed)."""

    def __init__(self, pid: int | None, stretch: float = MAX_STRETCH):
        self.pid = pid
        self.stretch = stretch
        self.charged_before = 0.0  # while stopped: what earlier runs charged
        self.wall_before = 0.0
        self.started: float | None = None
        self.delay_at_start = 0.0
        self.last_delay = 0.0  # what the kernel said last (a reaped process says nothing more)

    def start(self) -> TaskClock:
        if self.started is None:
            self.started = time.monotonic()
            self.delay_at_start = self._delay()
        return self

    def stop(self) -> None:
        if self.started is not None:
            self.charged_before, self.wall_before = self.charged(), self.wall()
            self.started = None

    def _delay(self) -> float:
        delay = run_delay(self.pid) if self.pid is not None else None
        if delay is not None:
            self.last_delay = delay
        return self.last_delay

    def wall(self) -> float:
        running = 0.0 if self.started is None else time.monotonic() - self.started
        return self.wall_before + running

    def charged(self) -> float:
        """Wall time less the run-queue wait, but never less than wall / stretch."""
        if self.started is None:
            return self.charged_before
        running = time.monotonic() - self.started
        waited = max(self._delay() - self.delay_at_start, 0.0)
        return self.charged_before + max(running - waited, running / self.stretch)

    def remaining(self, limit: float) -> float:
        """Seconds of `limit` left; the caller waits at most that long before it asks again.

        What is charged never exceeds the wall time, so while the wall time alone leaves time, what
        it leaves is a safe answer (the caller asks again once it has passed) and the kernel is not
        read: only near the limit does the run-queue wait decide."""
        if self.started is not None:
            least = limit - self.charged_before - (time.monotonic() - self.started)
            if least > 0.0:
                return least
        return limit - self.charged()
