"""Two grading processes on one machine never run their workers as the same uid."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.sandbox import uid_lease

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="leases are root's: only root switches uid")

HOLD = """
import sys
from autograder.sandbox.uid_lease import leased_uid
print(leased_uid(int(sys.argv[1])), flush=True)
sys.stdin.read()  # held until the test lets go
"""


def test_a_uid_another_process_holds_is_not_taken() -> None:
    wanted = 70_000 + os.getpid() % 500 * 3  # a block of its own, even beside another run of the suite
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(wanted)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        assert int(other.stdout.readline()) == wanted
        mine = uid_lease.leased_uid(wanted)
        assert mine == wanted + uid_lease.STRIDE
        assert uid_lease.leased_uid(wanted) == mine  # asked again: the one it holds
        assert uid_lease.leased_uid(wanted + 1) == wanted + 1  # a free one is its own
    finally:
        other.communicate("")
    # Once the other process has ended, its uid is free again for a new process.
    again = subprocess.run([sys.executable, "-c", HOLD, str(wanted)], input="", capture_output=True,
                           text=True, check=True)
    assert int(again.stdout) == wanted
