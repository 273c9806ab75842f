"""The engine beside its floor (issue 45): one batch graded by the warm pool, and the same probe calls
made directly in a warm process, interleaved, with the ratio of the two.

    .venv/bin/python benchmarks/grading_floor.py [--repeat 3] [--jobs 1]

The batch: 40 submissions of nn_module, a mix of right and wrong: reference copies, the graders'
correct variants (solutions/nn_module/graders/correct/), catalogued mistakes (misconceptions.toml's
`[[wrong]]` edits, applied as tests/test_catalogue.py does), the sample class (examples/class, but
arif.zip, whose endless loop would time the time limit) and a few hostile submissions that do not
hang (tests/hostile/: exits, floods, huge messages, lying values).

(a) the engine: `grade_batch` on a `GradingPool` started before the clock (as `autograder grade`
    does, with the ledger, the students' files and the class report; `import torch` is paid before);
(b) the floor: the probe calls the graders made for that batch (recorded once, before the clock,
    with their inputs and seeds), made again directly in one warm process that imported torch and
    the probes: each task's student file imported (again after a lost run, as grading does), each
    call seeded as the worker seeds it, no sandbox, no relay, no encoding, no judging, no files;
(c) the forked floor: (b), but each task run in a fresh fork of that warm process (its heap frozen
    and in huge pages, as the sandbox's worker settles before it forks), its inputs decoded there:
    what running each task in a process of its own costs, with nothing else of the engine.

Each repeat times (a), (b) and (c) one after the other, each first in turn (a shared machine's load
hits all alike); it prints each figure's median and min-max and the ratio (a)/(b) (goal <= 1.25),
with (a)/(c), the engine beside what its process per task costs, and (c)/(b), that cost itself.
`--jobs N` grades on N grading processes and splits the floor over N warm processes (round robin);
the default, 1, compares one process with one. Every repeat of (a) must give the same scores and
feedback as the recording: the script says so.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.sandbox import codec  # noqa: E402

ASSIGNMENT = "nn_module"
SOLUTIONS = ROOT / "solutions" / ASSIGNMENT
SAMPLE = ROOT / "examples" / "class"
HANGING = {"arif"}  # the sample class's endless loop: it would time the time limit, not the engine
# tests/hostile/ cases that end (no hang) and leave the process they run in usable (no kill, no
# monkeypatch): safe to run in the floor's own process. Name -> the file it replaces.
HOSTILE = {"sys_exit_at_import": "dropout.py", "sys_exit_in_function": "numpy_forward.py",
           "huge_exception": "numpy_forward.py", "stdout_flood": "containers.py",
           "lying_object": "counting.py", "lying_int": "counting.py", "binary_output": "numpy_forward.py"}
PLAN = "calls.bin"


# -- the batch ----------------------------------------------------------------------------------
def _reference(dest: Path, section: dict[str, Any]) -> Path:
    dest.mkdir(parents=True)
    for name in [*(t["file"] for t in section["tasks"].values()), *section.get("given", [])]:
        shutil.copy(SOLUTIONS / name, dest / name)
    return dest


def make_batch(folder: Path, size: int = 40) -> dict[str, int]:
    """`size` submissions in `folder` (one entry per student); how many of each kind."""
    section = tomllib.loads((ROOT / "grading.toml").read_text())["assignments"][ASSIGNMENT]
    wrong = tomllib.loads((SOLUTIONS / "graders" / "misconceptions.toml").read_text())["wrong"]
    variants = sorted(p for p in (SOLUTIONS / "graders" / "correct").iterdir() if p.is_dir())
    sample = sorted(p for p in SAMPLE.glob("*.zip") if p.stem not in HANGING)
    kinds = {"sample class": len(sample), "hostile": len(HOSTILE), "reference": 3}
    rest = size - sum(kinds.values())
    kinds["correct variant"] = rest * 2 // 5
    kinds["catalogued mistake"] = rest - kinds["correct variant"]
    made = 0

    def name(kind: str) -> Path:
        nonlocal made
        made += 1
        return folder / f"s{made:02d}-{kind}"

    for path in sample:
        shutil.copy(path, name(path.stem).with_suffix(".zip"))
    for case, target in HOSTILE.items():
        dest = _reference(name(case.replace("_", "-")), section)
        (dest / target).write_text((ROOT / "tests" / "hostile" / f"{case}.py.txt").read_text())
    for _ in range(kinds["reference"]):
        _reference(name("reference"), section)
    for variant in variants[:: max(1, len(variants) // kinds["correct variant"])][: kinds["correct variant"]]:
        dest = _reference(name(variant.name.replace("_", "-")), section)
        for src in variant.glob("*.py"):
            shutil.copy(src, dest / src.name)
    for entry in wrong[:: max(1, len(wrong) // kinds["catalogued mistake"])][: kinds["catalogued mistake"]]:
        dest = _reference(name(entry["id"]), section)
        target = dest / entry["file"]
        text = target.read_text()
        for old, new in entry["replace"]:
            text = text.replace(old, new, 1)
        target.write_text(text)
    return kinds


# -- recording the graders' probe calls ----------------------------------------------------------
def record(kit: Any, batch: Path, sandboxed: bool, plan: Path) -> dict[str, tuple[Any, ...]]:
    """Grade the batch once (one grading thread, so calls arrive in order) and write every task
    run's files and every probe call it made, as the worker received them; the results, by student."""
    from autograder.batch import grade_batch
    from autograder.grading import grader as grader_module
    from autograder.grading.options import GradeOptions
    from autograder.grading.pool import GradingPool
    from autograder.sandbox.local import call_seed
    from autograder.sandbox.session import SandboxSession

    plan.mkdir()
    current: dict[str, Any] = {}
    written: set[str] = set()
    out = (plan / PLAN).open("wb")
    real_grade, real_open, real_call = grader_module.Grader.grade, SandboxSession.open, SandboxSession.call

    def grade(self: Any, path: Path, *args: Any, **kwargs: Any) -> Any:
        current["student"] = path.name.removesuffix(".zip")
        return real_grade(self, path, *args, **kwargs)

    def open_(self: SandboxSession, files: dict[str, bytes], probes_source: str) -> Any:
        student = current["student"]
        if student not in written:
            written.add(student)
            folder = plan / "files" / student
            folder.mkdir(parents=True)
            for file_name, data in files.items():
                (folder / file_name).write_bytes(data)
        out.write(codec.encode({"op": "open", "student": student, "module": self.config.module}))
        return real_open(self, files, probes_source)

    def call(self: SandboxSession, probe: str, /, **kwargs: Any) -> Any:
        before = self.counter
        try:
            frame = codec.encode({"op": "call", "probe": probe, "kwargs": kwargs,
                                  "seed": call_seed(self.task, probe, before + 1)})
        except codec.EncodeError:
            frame = b""
        try:
            return real_call(self, probe, **kwargs)
        finally:
            if self.counter == before + 1 and frame:  # the call went to the worker
                out.write(frame)

    results: dict[str, tuple[Any, ...]] = {}
    patched = (grade, open_, call)
    grader_module.Grader.grade, SandboxSession.open, SandboxSession.call = patched  # type: ignore[method-assign]
    try:
        with GradingPool(kit, GradeOptions(sandbox=sandboxed), 1, ASSIGNMENT) as pool:
            grade_batch(kit, batch, plan / "out", pool=pool, regrade=True,
                        on_result=lambda r: results.__setitem__(r.student, exact(r)))
    finally:
        real = (real_grade, real_open, real_call)
        grader_module.Grader.grade, SandboxSession.open, SandboxSession.call = real  # type: ignore[method-assign]
        out.close()
    return results


def exact(result: Any) -> tuple[Any, ...]:
    """What must not change between runs: every check's score, key and feedback, and the notes."""
    checks = tuple((c.check_id, c.score, c.message_key, c.feedback) for t in result.tasks for c in t.checks)
    return result.notes, result.problem, tuple(t.output for t in result.tasks), checks


def differs(got: tuple[Any, ...] | None, expected: tuple[Any, ...] | None) -> str:
    """The first part of a result that is not as recorded, both ways."""
    if got is None or expected is None:
        return f"graded {got is not None}, recorded {expected is not None}"
    for name, a, b in zip(("notes", "problem", "output"), got[:3], expected[:3], strict=True):
        if a != b:
            return f"{name}: {a!r} (recorded {b!r})"
    for a, b in zip(got[3], expected[3], strict=False):
        if a != b:
            return f"{a!r} (recorded {b!r})"
    return "a check more or less"


def read_plan(plan: Path) -> Iterator[dict[str, Any]]:
    return (codec.revive(header, raw) for header, raw in read_frames(plan))


# -- the floor's process --------------------------------------------------------------------------
def read_frames(plan: Path) -> Iterator[tuple[dict[str, Any], bytes]]:
    """The plan's events undecoded: each header and its raw part (codec.revive makes the event)."""
    data = (plan / PLAN).read_bytes()
    at = 0
    while at < len(data):
        end = data.index(b"\n", at)
        header, size = codec.parse_header(data[at:end])
        yield header, data[end + 1 : end + 1 + size]
        at = end + 1 + size


Run = tuple[str, str, list[tuple[dict[str, Any], bytes]]]  # student folder, module, its calls (undecoded)


def serve_floor(plan: Path, share: int, shares: int, forked: bool) -> None:
    """A warm process replaying its share of the recorded runs on each `run` line of stdin; `forked`:
    each task run in a fresh fork of it, as the sandbox's worker runs each task in a fresh child."""
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # the students' output goes nowhere (the worker keeps 64 KB of it)
    os.dup2(null, 2)
    from autograder.config import load_kit
    from autograder.grading.course import load_graders
    from autograder.sandbox.inside.runtime import compile_probes, load_lazy_torch, seed_everything, warm_torch
    from autograder.sandbox.inside.server import settle

    warm_torch()  # one thread, lazily loaded parts in: as the warm worker before it forks
    load_lazy_torch()
    namespace: dict[str, Any] = {"__name__": "autograder_probes"}
    for code in compile_probes(load_graders(load_kit(ROOT).assignment(ASSIGNMENT)).probes_source):
        exec(code, namespace)  # noqa: S102  the assignment's own probes
    students = sorted({h["student"] for h, _ in read_frames(plan) if h["op"] == "open"})
    mine = set(students[share::shares])
    here = Path(tempfile.mkdtemp(prefix="floor-"))

    def runs() -> list[Run]:
        """Every task run of this share, its calls as recorded (decoded where they are made)."""
        found: list[Run] = []
        student = ""
        for header, raw in read_frames(plan):
            if header["op"] == "open":
                student = header["student"]
                found.append((str(here / student), header["module"], []))
            elif student in mine:
                found[-1][2].append((header, raw))
        return [run for run in found if Path(run[0]).name in mine]

    def replay_one(folder: str, module_name: str, calls: list[tuple[Any, int, dict[str, Any]]]) -> None:
        for name, loaded in list(sys.modules.items()):  # each run imports afresh, as a new child
            if getattr(loaded, "__file__", None) and str(loaded.__file__).startswith(folder + "/"):
                del sys.modules[name]
        sys.path.append(folder)
        os.chdir(folder)
        module: Any = None
        try:
            spec = importlib.util.spec_from_file_location(module_name, f"{folder}/{module_name}.py")
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        except BaseException:  # noqa: BLE001, S110  an import that fails makes no calls
            pass
        for probe, seed, kwargs in calls:
            seed_everything(seed)
            try:
                probe(module, **kwargs)
            except BaseException:  # noqa: BLE001, S110  the student's error is an answer too
                pass
        sys.path.remove(folder)

    def decoded(run: Run) -> list[tuple[Any, int, dict[str, Any]]]:
        events = (codec.revive(header, raw) for header, raw in run[2])
        return [(namespace[e["probe"]], e["seed"], e["kwargs"]) for e in events]

    for line in sys.stdin:
        if line.strip() != "run":
            break
        shutil.rmtree(here, ignore_errors=True)
        shutil.copytree(plan / "files", here)  # written files of the last run are gone
        todo = runs()
        if forked:  # as the worker before it forks: its heap frozen, in huge pages where it can be
            settle()
            wall = time.perf_counter()
            for run in todo:  # the inputs are decoded in the fork, as the task's child decodes them
                pid = os.fork()
                if pid == 0:
                    try:
                        replay_one(run[0], run[1], decoded(run))
                    finally:
                        os._exit(0)
                os.waitpid(pid, 0)
        else:
            inputs = [decoded(run) for run in todo]  # fresh inputs, decoded before the clock
            wall = time.perf_counter()
            for run, calls in zip(todo, inputs, strict=True):
                replay_one(run[0], run[1], calls)
        reply.write(f"{time.perf_counter() - wall}\n")
    shutil.rmtree(here, ignore_errors=True)


class Floor:
    """The floor's warm processes (one per job), started before the clock."""

    def __init__(self, plan: Path, shares: int, forked: bool = False):
        extra = ["--forked"] if forked else []
        self.processes = [
            subprocess.Popen(
                [sys.executable, __file__, "--serve-floor", str(plan), "--share", f"{i}/{shares}", *extra],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for i in range(shares)
        ]

    def run(self) -> float:
        """Wall seconds from the start until the last process replayed its share."""
        started = time.perf_counter()
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.write("run\n")
            process.stdin.flush()
        for process in self.processes:
            assert process.stdout is not None
            if not process.stdout.readline():
                raise SystemExit("a floor process died")
        return time.perf_counter() - started

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()
            process.wait()


# -- the run ---------------------------------------------------------------------------------------
def free_uid_base(first: int = 62000, span: int = 200, choices: int = 20) -> int:
    """Worker uids no process uses now: another engineer's pool never shares this one's uids."""
    used = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            lines = status.read_text().splitlines()
            used |= {int(line.split()[1]) for line in lines if line.startswith("Uid:")}
    for k in range(choices):
        if not any(first + k * span <= uid < first + (k + 1) * span for uid in used):
            return first + k * span
    return first


def spread(values: list[float], unit: str = " s") -> str:
    return (f"median {statistics.median(values):.2f}{unit} [min {min(values):.2f}, max {max(values):.2f}]"
            f" over {len(values)}")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1, help="grading processes (and floor processes)")
    parser.add_argument("--serve-floor", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--share", default="0/1", help=argparse.SUPPRESS)
    parser.add_argument("--forked", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor is not None:
        share, shares = (int(x) for x in args.share.split("/"))
        serve_floor(args.serve_floor, share, shares, args.forked)
        return

    from autograder.batch import grade_batch
    from autograder.config import SandboxConfig, load_kit
    from autograder.errors import SandboxUnavailable
    from autograder.grading.options import GradeOptions
    from autograder.grading.pool import GradingPool
    from autograder.sandbox.launch import check_available

    kit = load_kit(ROOT)
    kit = dataclasses.replace(kit, sandbox=SandboxConfig(free_uid_base()))
    try:
        check_available(kit.sandbox.uid_base)
        sandboxed = True
    except SandboxUnavailable:
        sandboxed = False
    loads = [load()]
    with tempfile.TemporaryDirectory(prefix="grading-floor-") as tmp:
        batch, plan = Path(tmp) / "batch", Path(tmp) / "plan"
        batch.mkdir()
        kinds = make_batch(batch)
        print(f"{sum(kinds.values())} submissions of {ASSIGNMENT} ("
              + ", ".join(f"{n} {k}" for k, n in kinds.items()) + f"); jobs {args.jobs}; "
              f"sandbox {'on' if sandboxed else 'off'}; load average {loads[0]}", flush=True)
        started = time.perf_counter()
        expected = record(kit, batch, sandboxed, plan)
        events = list(read_plan(plan))
        opens = sum(1 for e in events if e["op"] == "open")
        print(f"recorded in {time.perf_counter() - started:.1f} s: {opens} task runs, "
              f"{len(events) - opens} probe calls", flush=True)
        floor, forked = Floor(plan, args.jobs), Floor(plan, args.jobs, forked=True)
        engine_times: list[float] = []
        floor_times: list[float] = []
        forked_times: list[float] = []
        same = True
        try:
            with GradingPool(kit, GradeOptions(sandbox=sandboxed), args.jobs, ASSIGNMENT) as pool:
                floor.run()  # warm: the floor's first run, untimed (the recording warmed nothing of it)
                forked.run()

                def engine(index: int) -> float:
                    nonlocal same
                    got: dict[str, tuple[Any, ...]] = {}
                    begun = time.perf_counter()
                    grade_batch(kit, batch, Path(tmp) / f"out-{index}", pool=pool, regrade=True,
                                on_result=lambda r: got.__setitem__(r.student, exact(r)))
                    took = time.perf_counter() - begun
                    if got != expected:
                        same = False
                        for student in sorted(set(got) | set(expected)):
                            if got.get(student) != expected.get(student):
                                what = differs(got.get(student), expected.get(student))
                                print(f"  differs from the recording: {student}: {what}", file=sys.stderr)
                                if os.environ.get("FLOOR_DEBUG"):
                                    a, b = expected.get(student), got.get(student)
                                    for x, y in zip(a or (), b or (), strict=False):
                                        if x != y:
                                            print("   recorded:", repr(x)[:3000], "\n   now:", repr(y)[:3000],
                                                  file=sys.stderr)
                    return took

                engine(-1)  # warm: the pool's grading processes load what a first batch needs
                def measured(which: int, index: int) -> float:
                    return engine(index) if which == 0 else (floor, forked)[which - 1].run()

                timings = (engine_times, floor_times, forked_times)
                for index in range(max(1, args.repeat)):
                    for which in [(index + k) % 3 for k in range(3)]:  # each goes first in turn
                        timings[which].append(measured(which, index))
                    a, b, c = engine_times[-1], floor_times[-1], forked_times[-1]
                    print(f"repeat {index + 1}: engine {a:.2f} s, floor {b:.2f} s (ratio {a / b:.2f}), "
                          f"forked floor {c:.2f} s (ratio {a / c:.2f}); load average {load()}", flush=True)
                    loads.append(load())
        finally:
            floor.close()
            forked.close()
    ratios = [a / b for a, b in zip(engine_times, floor_times, strict=True)]
    print(f"(a) engine, warm pool, whole batch: {spread(engine_times)}")
    print(f"(b) floor, the same probe calls:    {spread(floor_times)}")
    print(f"(c) floor, each task run forked:    {spread(forked_times)}")
    print(f"ratio (a)/(b): {spread(ratios, 'x')} (goal <= 1.25)")
    print(f"ratio (a)/(c), the engine beside its isolation's own floor: "
          f"{spread([a / c for a, c in zip(engine_times, forked_times, strict=True)], 'x')}")
    print(f"ratio (c)/(b), a fresh process per task run: "
          f"{spread([c / b for c, b in zip(forked_times, floor_times, strict=True)], 'x')}")
    print(f"same scores and feedback in every run as recorded: {'yes' if same else 'NO'}")
    print(f"load average (1, 5, 15 min) at the start and after each repeat: {'; '.join(loads)}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
