"""What the hidden challenges cost (issue 20): one batch graded by today's graders and by the graders
of an earlier revision, on warm pools, alternating, in one run; prints the time per submission.

    .venv/bin/python benchmarks/challenge_cost.py [--base a782239] [--students 24] [--jobs 2] [--rounds 3]

`--base` is the revision whose `solutions/` and `grading.toml` are the comparison (default: main
before issue 20). Both kits are graded by this engine on warm pools (a batch first, untimed:
startup, caches), so only the checks and probes differ. Goal: at most 1.10x.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grading_speed import make_batch  # noqa: E402

from autograder.batch import grade_batch  # noqa: E402
from autograder.config import load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.grading.options import GradeOptions  # noqa: E402
from autograder.grading.pool import GradingPool  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402


def base_kit(revision: str, into: Path) -> Path:
    """grading.toml and solutions/ as they were at `revision` (read from git, nothing checked out)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "grading.toml", "solutions"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="a782239")
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    try:
        check_available(load_kit(ROOT).sandbox.uid_base)
        sandboxed = True
    except SandboxUnavailable:
        sandboxed = False
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        batch = tmp / "batch"
        batch.mkdir()
        make_batch(batch, args.students)
        kits = {"before": load_kit(base_kit(args.base, tmp / "base")), "now": load_kit(ROOT)}
        times: dict[str, list[float]] = {name: [] for name in kits}
        for round_ in range(args.rounds):
            order = list(kits.items()) if round_ % 2 == 0 else list(kits.items())[::-1]  # no order bias
            for name, kit in order:  # one pool at a time: both would claim the same worker slots
                with GradingPool(kit, GradeOptions(sandbox=sandboxed), args.jobs) as pool:
                    grade_batch(kit, batch, tmp / f"warm-{name}-{round_}", pool=pool, regrade=True)
                    start = time.perf_counter()
                    grade_batch(kit, batch, tmp / f"{name}-{round_}", pool=pool, regrade=True)
                    times[name].append((time.perf_counter() - start) / args.students)
    before, now = (statistics.median(times[name]) for name in ("before", "now"))
    # Each round grades both, back to back: the ratio within a round is free of the machine's drift.
    paired = statistics.median(n / b for n, b in zip(times["now"], times["before"], strict=True))
    print(f"{args.students} submissions, {args.jobs} jobs, {'sandboxed' if sandboxed else 'no sandbox'}, "
          f"{args.rounds} rounds alternating, median per submission:")
    print(f"  graders of {args.base}: {before * 1000:.0f} ms  (rounds: {_ms(times['before'])})")
    print(f"  graders now:        {now * 1000:.0f} ms  (rounds: {_ms(times['now'])})")
    print(f"  now / before: {now / before:.3f}x of the medians, {paired:.3f}x the median round "
          "(goal <= 1.10x)")


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v * 1000:.0f}" for v in values)


if __name__ == "__main__":
    main()
