"""Hostile submissions: each is graded with the verdict a correct grader must give, then checked.

Every case is a copy of the reference solutions with one task file replaced by hostile code
(from tests/hostile/, stored as .txt so that no tool ever imports it on the host). After each
grading the suite checks that

- the attacked task scored 0 (or less than full marks) and every other task kept full marks;
- no process is left: only the warm worker and its idle relay run as the suite's worker uids;
- no file was written outside the worker: a canary folder, the kit and the runtime are unchanged;
- no connection was made: listeners on 127.0.0.1 received nothing;
- secrets (an environment variable of the grading process, a root-only file) appear nowhere
  in results, feedback or captured output, and results.json stays small;
- a clean submission graded right after gets exactly 100 and the same feedback as alone.

All cases share one warm, sandboxed Grader with 3-second task budgets and their own worker
uids (61500+), so that the checks never mistake another grader's processes for leftovers.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from autograder.batch import grade_batch
from autograder.config import Kit, SandboxConfig, load_kit
from autograder.errors import SandboxUnavailable
from autograder.grading import judge
from autograder.grading.course import load_graders
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions
from autograder.grading.results import SubmissionResult, result_to_dict
from autograder.output import reports
from autograder.sandbox import codec, seccomp
from autograder.sandbox import launch as sandbox
from autograder.sandbox.client import WorkerProcess
from autograder.sandbox.inside.integrity import Snapshot
from autograder.sandbox.launch import Launch, check_available
from autograder.sandbox.local import InProcessSession

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "nn_module"
HOSTILE = Path(__file__).resolve().parent / "hostile"


def _free_uid_base(first: int = 61500, span: int = 20, choices: int = 40) -> int:
    """A block of `span` uids no process uses now (not even another run of this suite)."""
    used = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
            used |= {int(line.split()[1]) for line in lines if line.startswith("Uid:")}
        except (OSError, ValueError, IndexError):
            continue
    for k in range(choices):
        if not any(first + k * span <= uid < first + (k + 1) * span for uid in used):
            return first + k * span
    return first


UID_BASE = _free_uid_base()  # the suite's own worker uids: the checks never mistake others' processes
CLI_UID_BASE = UID_BASE + 10
BUDGET = 3.0  # seconds of wall and CPU time per task
SECRET_ENV = "AUTOGRADER_TEST_SECRET"
PAYLOAD = b"touch /tmp/pwned"  # what write_outside appends wherever it can
TIME_KEYS = frozenset({"engine.time_limit", "engine.cpu_limit"})
MAX_RESULTS_BYTES = 200_000

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="workers switch to their own uid: run as root")


# -- the world the hostile code tries to reach ------------------------------------------------
@dataclass
class World:
    """Everything outside the worker that a hostile submission tries to read, write or reach."""

    kit: Kit  # a copy of the kit with short budgets and the suite's uids
    kit_root: Path
    canary: Path
    secret_file: Path
    secret_token: str  # the value of $AUTOGRADER_TEST_SECRET in the grading process
    file_token: str  # the content of the root-only secret file
    other: Path  # another student's submission on the host
    out: Path  # an output folder with a gradebook
    tcp: socket.socket
    udp: socket.socket
    tcp6: socket.socket | None
    port: int

    def substitute(self, source: str) -> str:
        for key, value in {
            "@PORT@": str(self.port), "@CANARY@": str(self.canary), "@SECRET_FILE@": str(self.secret_file),
            "@SECRET_TOKEN@": self.secret_token, "@FILE_TOKEN@": self.file_token, "@KIT@": str(self.kit_root),
            "@REAL_KIT@": str(ROOT), "@OTHER@": str(self.other), "@OUT@": str(self.out),
        }.items():
            source = source.replace(key, value)
        return source

    def host_markers(self) -> list[Path]:
        """Files the hostile code would have made on the host had it escaped."""
        names = ["pwned", "conftest-ran", "sitecustomize-ran", "usercustomize-ran", "init-ran",
                 "main-ran", "pth-ran", "fake-torch-ran", "fake-numpy-ran", "fake-random-ran",
                 "results.json"]
        found = [Path("/tmp") / name for name in names if (Path("/tmp") / name).exists()]
        found += [p for p in ROOT.glob("pwned*")] + [p for p in self.kit_root.glob("pwned*")]
        for path in (ROOT / "grading.toml", ROOT / "autograder" / "__init__.py"):
            if PAYLOAD in path.read_bytes():
                found.append(path)
        for site in {Path(p) for p in sys.path if p.endswith("site-packages")}:
            found += list(site.glob("zz_pwned*"))
        return found


def _tree_digest(*roots: Path) -> dict[str, str]:
    """Content and mode of every file below the roots (links not followed)."""
    digest: dict[str, str] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in paths:
            if "__pycache__" in path.parts:
                continue  # the grading process's own bytecode
            st = path.lstat()
            if path.is_symlink() or not path.is_file():
                digest[str(path)] = f"{st.st_mode:o}"
                continue
            digest[str(path)] = f"{st.st_mode:o}:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def _host_digest(world: World) -> dict[str, str]:
    """The host files a hostile submission tries to change: they must stay exactly as they were.

    (The real kit is edited by people while the suite runs: there, see `host_markers`.)
    """
    return _tree_digest(world.canary, world.kit_root)


def _worker_processes(base: int) -> list[dict[str, int | str]]:
    """Every process whose real uid is one of a kit's worker uids (base + slot, ten slots)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields["Uid"].split()[0])
        if base <= uid < base + 10:
            found.append({"pid": int(entry.name), "ppid": int(fields["PPid"]), "uid": uid,
                          "name": fields["Name"].strip(), "state": fields["State"].strip()})
    return found


def strays(allowed: set[int], base: int = UID_BASE) -> list[dict[str, int | str]]:
    """Worker-uid processes other than the warm workers in `allowed` and one idle relay of each."""
    procs = _worker_processes(base)
    parents = {p["ppid"] for p in procs}
    left = []
    for proc in procs:
        if proc["pid"] in allowed:
            continue
        idle_relay = proc["ppid"] in allowed and proc["pid"] not in parents and proc["state"][0] in "SR"
        if not idle_relay:
            left.append(proc)
    relays = [p for p in procs if p["ppid"] in allowed]
    if len(relays) > len(allowed):
        left += relays
    return left


def assert_no_strays(allowed: set[int], base: int = UID_BASE, wait: float = 5.0) -> None:
    deadline = time.monotonic() + wait
    while (left := strays(allowed, base)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"processes left behind: {left}"


@pytest.fixture(scope="module")
def world(kit: Kit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    if not sandbox_available(kit):
        pytest.fail("the hostile suite needs the sandbox: install bubblewrap (make setup) and run as root")
    base = tmp_path_factory.mktemp("hostile-world")
    kit_root = base / "kit"
    kit_root.mkdir()
    shutil.copy(ROOT / "grading.toml", kit_root / "grading.toml")
    shutil.copytree(ROOT / "solutions", kit_root / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    loaded = load_kit(kit_root)
    assignment = loaded.assignment("nn_module")
    tasks = tuple(dataclasses.replace(t, time_limit=BUDGET, cpu_limit=BUDGET) for t in assignment.tasks)
    fast = dataclasses.replace(
        loaded, sandbox=SandboxConfig(UID_BASE),
        assignments={"nn_module": dataclasses.replace(assignment, tasks=tasks)},
    )
    canary = base / "canary"
    canary.mkdir()
    (canary / "canary.txt").write_text("the host's own file\n")
    file_token = "file-" + secrets.token_hex(16)
    secret_file = base / "secret.txt"
    secret_file.write_text(file_token)
    secret_file.chmod(0o600)
    other = base / "other-student"
    shutil.copytree(SOLUTIONS, other, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    out = base / "out"
    out.mkdir()
    sqlite3.connect(out / "gradebook.sqlite").close()
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    tcp.setblocking(False)
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    udp.setblocking(False)
    tcp6 = None
    try:
        tcp6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        tcp6.bind(("::1", port))
        tcp6.listen(8)
        tcp6.setblocking(False)
    except OSError:
        tcp6 = None
    token = "env-" + secrets.token_hex(16)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SECRET_ENV, token)
        yield World(fast, kit_root, canary, secret_file, token, file_token, other, out, tcp, udp, tcp6, port)
    for sock in (tcp, udp, tcp6):
        if sock is not None:
            sock.close()


def sandbox_available(kit: Kit) -> bool:
    try:
        check_available(kit.sandbox.uid_base)
    except SandboxUnavailable:
        return False
    return True


@dataclass
class Suite:
    world: World
    grader: Grader
    clean: Path
    baseline: SubmissionResult
    host: dict[str, str]


@pytest.fixture(scope="module")
def suite(world: World) -> Iterator[Suite]:
    clean = world.out.parent / "clean"
    shutil.copytree(SOLUTIONS, clean, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    grader = Grader(world.kit, "nn_module", GradeOptions(sandbox=True), slot=0)
    try:
        grader.worker.ensure()
        baseline = grader.grade(clean, student="clean")
        failing = [(c.check_id, c.feedback) for t in baseline.tasks for c in t.checks if not c.passed]
        assert failing == [] and baseline.score == 100
        host = _host_digest(world)
        yield Suite(world, grader, clean, baseline, host)
    finally:
        grader.close()
    # Closing the grader leaves nothing of its sandbox behind.
    assert_no_strays(set())


# -- the cases -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One hostile submission and the verdict a correct grader must give."""

    name: str  # tests/hostile/<name>.py.txt
    target: str  # the task file it replaces
    keys: frozenset[str] = frozenset()  # when set: every failed check of the task failed for one of these
    says: tuple[str, ...] = ()  # text the task's feedback must show
    below: bool = False  # less than full marks is enough (structure checks may rightly pass)
    extras: tuple[str, ...] = ()  # files of tests/hostile/extras added to the submission
    notes: tuple[str, ...] = ()  # text the submission's notes must show
    snoop: bool = False  # then a snooping submission must find nothing left behind

    def __str__(self) -> str:
        return self.name


def keys(*names: str) -> frozenset[str]:
    return frozenset(f"engine.{n}" for n in names)


REFUSED = ("conftest.py", "sitecustomize.py", "usercustomize.py", "__init__.py", "__main__.py", "zz_evil.pth")
SHADOWS = ("torch.py", "numpy.py", "json.py", "random.py", "typing_extensions.py")

CASES = [
    # Exits: no answer is never a pass.
    Case("exit_at_import", "dropout.py", keys("exited")),
    Case("sys_exit_at_import", "dropout.py", keys("import_error"), says=("SystemExit",)),
    Case("exit_in_function", "counting.py", keys("exited")),
    Case("sys_exit_in_function", "numpy_forward.py", says=("SystemExit",)),
    # Hangs: cut at the budget from outside.
    Case("loop_at_import", "counting.py", TIME_KEYS),
    # A hanging call costs the checks that make it; it uses up the task's limit, which all its
    # runs share (issue 44), so the remaining calls are refused (engine.not_run).
    Case("loop_in_function", "containers.py", TIME_KEYS | keys("not_run")),
    Case("loop_in_thread", "delivery.py", TIME_KEYS | keys("not_run")),
    Case("sleep_at_import", "tinynet.py", keys("time_limit")),
    Case("ignored_signals", "counting.py", TIME_KEYS),
    # Processes: everything the task started dies with it.
    Case("fork_swarm", "counting.py", TIME_KEYS | keys("killed")),
    Case("setsid_daemon", "dropout.py", keys("exited"), snoop=True),
    Case("exec_shell", "delivery.py", keys("import_error"), says=("started",)),
    # Memory.
    Case("memory_python", "tinynet.py", keys("import_error"), says=("MemoryError",)),
    Case("memory_python_gradual", "counting.py"),
    Case("memory_torch", "numpy_forward.py", says=("allocate",)),
    Case("raise_limits", "counting.py", keys("import_error"), says=("ESCAPED=[]",)),
    # Output.
    Case("stdout_flood", "containers.py"),
    Case("huge_exception", "numpy_forward.py"),
    Case("binary_output", "numpy_forward.py"),
    Case("closed_stdout", "containers.py"),
    # Forged results and a forged channel.
    Case("forged_results", "counting.py", snoop=True),
    Case("forged_protocol", "counting.py"),
    Case("garbage_protocol", "dropout.py", keys("protocol")),
    Case("huge_line_protocol", "dropout.py", keys("answer_too_large")),
    Case("forged_blob_sizes", "dropout.py", keys("answer_too_large")),
    Case("withheld_blob", "numpy_forward.py", keys("time_limit")),
    Case("blob_mismatch", "counting.py", keys("protocol")),
    Case("closed_fds", "counting.py", keys("exited", "protocol")),
    Case("closed_fds_then_wait", "counting.py", keys("time_limit", "protocol")),
    # Files that must never run, modules named like installed ones.
    Case("stub_tinynet", "tinynet.py", keys("not_implemented") | {"common.not_implemented"}, extras=REFUSED,
         notes=REFUSED),
    Case("shadow_modules", "counting.py", extras=(*SHADOWS, "helpers.py"), notes=SHADOWS),
    # Monkeypatching inside the worker changes nothing in the grading process.
    Case("monkeypatch_numpy", "numpy_forward.py"),
    Case("monkeypatch_torch", "containers.py", below=True),
    Case("monkeypatch_builtins", "counting.py"),
    # Values that lie about equality, and values that would run code when unpickled.
    Case("lying_object", "counting.py"),
    Case("lying_int", "counting.py"),
    Case("lying_ndarray", "numpy_forward.py"),
    Case("lying_tensor", "containers.py", below=True),
    Case("reduce_payload", "dropout.py"),
    # Looking and reaching outside.
    Case("read_secrets", "tinynet.py", keys("import_error"), says=("LEAKS=[]", "PIDS=3")),
    Case("write_outside", "counting.py", keys("import_error"), says=("WROTE=[]",), snoop=True),
    Case("network", "delivery.py", keys("import_error"), says=("CONNECTED=[]",)),
    # Attacks on the worker itself.
    Case("kill_parent", "dropout.py", keys("killed")),
    Case("kill_everyone", "tinynet.py", keys("killed")),
    Case("stop_parent", "counting.py", keys("killed")),
    Case("deep_recursion", "tinynet.py", keys("crashed")),
    Case("fill_tmp", "dropout.py", keys("import_error"), says=("filled",), snoop=True),
]


def build_submission(world: World, folder: Path, case: Case) -> Path:
    source = (HOSTILE / f"{case.name}.py.txt").read_text()
    (folder / case.target).write_text(world.substitute(source))
    for name in case.extras:
        shutil.copy(HOSTILE / "extras" / f"{name}.txt", folder / name)
    return folder


def check_contained(suite: Suite, result: SubmissionResult, started: int) -> None:
    """The checks after every hostile grading, whatever the attack."""
    world = suite.world
    grader = suite.grader
    assert grader.worker.starts == started, "the warm worker had to be replaced"
    assert_no_strays({grader.worker.sandbox_pid} if grader.worker.sandbox_pid else set())
    host = _host_digest(world)
    assert host == suite.host, "a host file changed"
    assert world.host_markers() == []
    for sock in (world.tcp, world.tcp6):
        if sock is not None:
            with pytest.raises(BlockingIOError):
                sock.accept()
    with pytest.raises(BlockingIOError):
        world.udp.recvfrom(4096)
    stored = json.dumps(result_to_dict(result), ensure_ascii=False)
    results_json = json.dumps(reports.gradescope_results(result), ensure_ascii=False)
    feedback = reports.feedback_markdown(result, world.kit.assignment())
    for text in (stored, results_json, feedback):
        text.encode("utf-8")  # valid Unicode: the files can be written
        assert world.secret_token not in text and world.file_token not in text
    assert len(results_json) < MAX_RESULTS_BYTES
    assert all(len(t.output) <= 70_000 for t in result.tasks)


def check_clean_after(suite: Suite) -> None:
    again = suite.grader.grade(suite.clean, student="clean")
    assert again == suite.baseline, [
        (c.check_id, c.feedback) for t in again.tasks for c in t.checks if not c.passed
    ]


def check_verdict(result: SubmissionResult, case: Case) -> None:
    attacked = case.target.removesuffix(".py")
    for task in result.tasks:
        if task.task != attacked:
            assert task.score == task.max_score, (task.task, [c.feedback for c in task.checks])
            continue
        assert task.score < task.max_score if case.below else task.score == 0, [
            (c.check_id, c.score) for c in task.checks
        ]
        failed = {c.message_key for c in task.checks if not c.passed}
        if case.keys:
            assert failed <= case.keys, failed
        text = "\n".join(c.feedback for c in task.checks)
        for expected in case.says:
            assert expected in text, text[:2000]
    notes = _shown(result)
    for expected in case.notes:
        assert f"`{expected}`" in notes, notes


def test_the_sandbox_is_there(kit: Kit) -> None:
    """Fails loudly (never skips) when this machine cannot isolate student code."""
    check_available(kit.sandbox.uid_base)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_hostile_submission(suite: Suite, reference_copy: Path, case: Case) -> None:
    started = suite.grader.worker.starts
    result = suite.grader.grade(build_submission(suite.world, reference_copy, case), student="mallory")
    check_verdict(result, case)
    check_contained(suite, result, started)
    if case.snoop:
        snooper = reference_copy.parent / "snooper"
        shutil.copytree(SOLUTIONS, snooper, ignore=shutil.ignore_patterns("graders", "__pycache__"))
        (snooper / "tinynet.py").write_text((HOSTILE / "snoop.py.txt").read_text())
        seen = suite.grader.grade(snooper, student="snooper")
        text = "\n".join(c.feedback for c in seen.task("tinynet").checks)
        assert 'SNOOP={"tmp": [], "procs": []}' in text, text[:1000]
        check_contained(suite, seen, started)
    check_clean_after(suite)


FORGERIES = sorted(p.name.removesuffix(".py.txt") for p in (HOSTILE / "forgeries").glob("*.py.txt"))
# A stub whose forgery answers the structure probes as a correct model would: the file is the task's.
STRUCTURE_FORGERIES = sorted(p.name.removesuffix(".py.txt")
                             for p in (HOSTILE / "structure_forgeries").glob("*.py.txt"))


def without_forgery(source: str) -> str:
    """The same file with its forgery taken out: the block between the markers, the marked lines."""
    kept, inside = [], False
    for line in source.splitlines(keepends=True):
        if line.startswith("# >>> forgery"):
            inside = True
        elif line.startswith("# <<< forgery"):
            inside = False
        elif not inside and not line.rstrip().endswith("# forgery"):
            kept.append(line)
    return "".join(kept)


@pytest.mark.parametrize("forgery", FORGERIES + [f"structure_{task}" for task in STRUCTURE_FORGERIES])
def test_a_forged_observation_gains_nothing(suite: Suite, reference_copy: Path, forgery: str) -> None:
    """Probes replaced through frames, the garbage collector or the probes' namespace, an encoder
    that rewrites answers, a patched runtime or torch, structure probes answered as a correct model
    would: the task scores no more than the same file without the forgery, and is marked for review
    as tampered, never as an ordinary mistake."""
    task = forgery.removeprefix("structure_") if forgery.startswith("structure_") else "tinynet"
    folder = "structure_forgeries" if forgery.startswith("structure_") else "forgeries"
    source = (HOSTILE / folder / f"{forgery.removeprefix('structure_')}.py.txt").read_text()
    honest = reference_copy.parent / "honest"
    shutil.copytree(reference_copy, honest)
    (honest / f"{task}.py").write_text(without_forgery(source))
    (reference_copy / f"{task}.py").write_text(source)
    started = suite.grader.worker.starts
    forged = suite.grader.grade(reference_copy, student="forger")
    plain = suite.grader.grade(honest, student="honest")
    assert forged.task(task).score <= plain.task(task).score
    assert {c.message_key for c in forged.task(task).checks} == {"engine.tampered"}
    assert "changed" in forged.task(task).checks[0].feedback
    assert all(t.score == t.max_score for t in forged.tasks if t.task != task)
    check_contained(suite, forged, started)
    check_clean_after(suite)


def test_memory_swarm_is_capped_as_a_whole(world: World, reference_copy: Path) -> None:
    """Eight processes filling 700 MB each, every one within its own limit: the sandbox's cgroup
    stops them together (the kernel kills some), and the grading goes on.

    Its own grader, with time for the allocations on a busy machine; skipped where the machine
    offers no writable memory cgroup (then only per-process limits hold, see the other cases).
    """
    assignment = world.kit.assignment()
    tasks = tuple(dataclasses.replace(t, time_limit=30.0, cpu_limit=30.0) for t in assignment.tasks)
    slow = dataclasses.replace(assignment, tasks=tasks)
    kit = dataclasses.replace(world.kit, assignments={"nn_module": slow})
    with Grader(kit, "nn_module", GradeOptions(sandbox=True), slot=1) as grader:
        grader.worker.ensure()
        if grader.worker.cgroup is None:
            pytest.skip("no writable memory cgroup on this machine: only per-process limits hold")
        case = Case("memory_swarm", "containers.py", keys("import_error", "killed"))
        result = grader.grade(build_submission(world, reference_copy, case), student="mallory")
        check_verdict(result, case)
        text = "\n".join(c.feedback for c in result.task("containers").checks)
        alive = int(text.split("SWARM alive=")[1].split()[0]) if "SWARM alive=" in text else 0
        assert alive <= 3, text[:500]  # 8 x 700 MB do not fit in the task's 1 GB (plus /tmp and a margin)
        memory = grader.worker.cgroup.folders["memory"]
        if (memory / "memory.oom_control").exists():
            assert "oom_kill 0" not in (memory / "memory.oom_control").read_text()
        again = grader.grade(SOLUTIONS, student="clean")
        assert again.score == 100
    assert_no_strays(set(), UID_BASE + 1)


def test_worker_killed_mid_task_is_replaced(suite: Suite, reference_copy: Path) -> None:
    """The whole sandbox dies under a task: that task gets a clear verdict, the next ones a fresh worker."""
    (reference_copy / "tinynet.py").write_text("import time\ntime.sleep(2.5)\n")
    started = suite.grader.worker.starts
    victim = suite.grader.worker.sandbox_pid
    assert victim is not None
    timer = threading.Timer(1.0, os.kill, (victim, signal.SIGKILL))
    timer.start()
    try:
        result = suite.grader.grade(reference_copy, student="mallory")
    finally:
        timer.join()
    assert suite.grader.worker.starts == started + 1
    check_verdict(result, Case("worker_killed", "tinynet.py", keys("killed")))
    check_contained(suite, result, started + 1)
    check_clean_after(suite)


# -- issue #34: a hanging call costs the checks that make it, not the task -----------------------
# The checks before the first training call: the hang uses up the task's limit (issue 44), so the
# checks after it are refused (engine.not_run), saying so.
KEPT_BY_A_HANGING_TRAIN = {"registration", "weight_shapes"}


def probe_names(kit: Kit) -> set[str]:
    """The names of the assignment's probes, but for those that are a student's function too
    (numpy_forward's `delivery_forward`): never shown to a student."""
    source = load_graders(kit.assignment("nn_module")).probes_source
    probes = {line[4:].split("(")[0] for line in source.splitlines()
              if line.startswith("def ") and not line.startswith("def _")}
    students = {line.split()[1].split("(")[0] for path in SOLUTIONS.glob("*.py")
                for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("def ")}
    return probes - students


def test_a_hanging_train_costs_only_the_checks_that_call_it(suite: Suite, reference_copy: Path) -> None:
    """train_tinynet loops before its loop (line 22): TinyNet's checks before it keep their points,
    the checks after it fail naming train_tinynet and tinynet.py:22, and no probe's name is shown."""
    build_submission(suite.world, reference_copy, Case("loop_in_train", "tinynet.py"))
    started = suite.grader.worker.starts
    result = suite.grader.grade(reference_copy, student="mallory")
    tinynet = result.task("tinynet")
    kept = {c.name for c in tinynet.checks if c.passed}
    assert kept == KEPT_BY_A_HANGING_TRAIN, [(c.name, c.message_key) for c in tinynet.checks]
    failed = [c for c in tinynet.checks if not c.passed]
    assert {c.message_key for c in failed} <= TIME_KEYS | keys("not_run")
    assert failed[0].message_key in TIME_KEYS
    for check in failed:
        assert "`train_tinynet(" in check.feedback and "`tinynet.py:22`" in check.feedback, check.feedback
        assert "`while True: pass`" in check.feedback, check.feedback
    assert all(t.score == t.max_score for t in result.tasks if t.task != "tinynet")
    shown = (json.dumps(result_to_dict(result), ensure_ascii=False)
             + reports.feedback_markdown(result, suite.world.kit.assignment()))
    leaked = sorted(name for name in probe_names(suite.world.kit) if name in shown)
    assert leaked == [], leaked
    check_contained(suite, result, started)
    check_clean_after(suite)


# -- the grader side of the channel, with a fake worker ---------------------------------------
def _fake_worker(script: str) -> WorkerProcess:
    boot = "import sys, json\nprint(json.dumps({'ready': True}), flush=True)\nsys.stdin.readline()\n"
    return WorkerProcess(Launch((sys.executable, "-c", boot + script), {}, False))


@pytest.mark.parametrize(
    ("script", "failure"),
    [
        ("sys.stdout.write('not json at all\\n'); sys.stdout.flush()", "protocol"),
        ("sys.stdout.write('[' * 100000 + '\\n'); sys.stdout.flush()", "protocol"),
        ("sys.stdout.write('x' * (60 * 1024 * 1024)); sys.stdout.flush(); sys.stdin.read()", "protocol"),
        ("sys.stdout.write('[1, 2]\\n'); sys.stdout.flush()", "protocol"),
        ("import os; os._exit(0)", "died"),
        ("import time; time.sleep(60)", "timeout"),
    ],
    ids=["garbage", "deep", "huge", "not-an-object", "died", "silent"],
)
def test_grader_survives_any_reply(script: str, failure: str) -> None:
    worker = _fake_worker(script)
    try:
        assert worker.request({"op": "call"}, 0.5) is None
        assert worker.failure == failure  # "timeout" for the silent one: stopped by the budget, not its end
        assert worker.proc is None  # killed: the next request starts a fresh worker
    finally:
        worker.stop()


def test_stale_replies_are_skipped_and_text_is_cleaned() -> None:
    script = (
        "print(json.dumps({'id': 0, 'answer': {'value': 'stale'}}))\n"
        "print()\n"
        "print(json.dumps({'id': 1, 'answer': {'value': 'bad \\udcff text'}}), flush=True)\n"
    )
    worker = _fake_worker(script)
    try:
        reply = worker.request({"op": "call"}, 5.0)
        assert reply == {"id": 1, "answer": {"value": "bad ? text"}}
    finally:
        worker.stop()


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": {"__ndarray__": 0, "dtype": "float64", "shape": [-1]}, "__blobs__": [8]}\n' + bytes(8),
        b'{"a": {"__ndarray__": 0, "dtype": "float64", "shape": "8"}, "__blobs__": [8]}\n' + bytes(8),
        b'{"a": {"__ndarray__": 7, "dtype": "float64", "shape": [1]}, "__blobs__": [8]}\n' + bytes(8),
        b'{"a": {"__ndarray__": "0", "dtype": "float64", "shape": [1]}, "__blobs__": [8]}\n' + bytes(8),
        b'{"a": {"__ndarray__": 0, "dtype": ["float64"], "shape": [1]}, "__blobs__": [8]}\n' + bytes(8),
        b'{"a": {"__ndarray__": 0, "dtype": "float64", "shape": [2]}, "__blobs__": [8]}\n' + bytes(8),
        b'{"a": {"__ndarray__": 0, "dtype": "float64", "shape": [1]}, "__blobs__": [8]}\n' + bytes(4),
        b'{"a": {"__ndarray__": 0, "dtype": "float64", "shape": [1]}, "__blobs__": [-8]}\n',
        b'{"a": {"__ndarray__": 0, "dtype": "float64", "shape": [1]}, "__blobs__": "8"}\n' + bytes(8),
        b'{"a": {"__float__": 1}}',
        b'{"a": ' + b"[" * 60 + b"]" * 60 + b"}",
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["negative-shape", "shape-not-a-list", "no-such-blob", "index-not-int", "dtype-not-text",
         "shape-bigger-than-blob", "blob-cut-short", "negative-size", "sizes-not-a-list", "float-not-text",
         "deep", "very-deep"],
)
def test_decode_refuses_malformed_replies(line: bytes) -> None:
    with pytest.raises(ValueError):
        codec.decode(line)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_seccomp_filter_is_well_formed(machine: str) -> None:
    """Every jump lands inside the program, which ends with a verdict; its verdicts: allow, EPERM, ENOSYS.

    (Which calls get which verdict: tests/sandbox/test_seccomp.py.)
    """
    program = seccomp.seccomp_filter(machine)
    assert program and len(program) % 8 == 0
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    for index, (code, jt, jf, k) in enumerate(insns):
        if code in (0x15, 0x25, 0x35, 0x45):  # jeq, jgt, jge, jset
            assert index + 1 + max(jt, jf) < len(insns)
        elif code == 0x05:  # ja
            assert index + 1 + k < len(insns)
    assert insns[-1][0] == 0x06
    assert {k for code, _, _, k in insns if code == 0x06} == {0x7FFF0000, 0x00050001, 0x00050026}
    assert seccomp.seccomp_filter("sparc") == b""


# -- bad input: graded, never fatal ------------------------------------------------------------
def _zip(path: Path, entries: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777) << 16
            archive.writestr(info, target)
    return path


def _reference_files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in SOLUTIONS.glob("*.py")}


BAD_INPUTS = {
    # name: (how to make it, the tasks that must score 0, text its feedback or notes must show)
    "syntax_error": (lambda d: (d / "counting.py").write_text("def count(:\n"), ["counting"], "SyntaxError"),
    "binary_file": (lambda d: (d / "counting.py").write_bytes(os.urandom(4096) + b"\0\xff"), ["counting"],
                    "could not be imported"),
    "latin1": (lambda d: (d / "counting.py").write_bytes(
                   (d / "counting.py").read_bytes() + '\nGREETING = "\u00e9t\u00e9"\n'.encode("latin-1")),
               ["counting"], "SyntaxError"),
    "missing_files": (lambda d: [(d / n).unlink() for n in ("counting.py", "dropout.py")],
                      ["counting", "dropout"],
                      "is not in your submission"),
    "huge_file": (lambda d: (d / "counting.py").write_bytes(b"#" * (3 * 1024 * 1024)), ["counting"],
                  "larger than"),
    "directory_named_like_a_task": (lambda d: ((d / "counting.py").unlink(), (d / "counting.py").mkdir()),
                                    ["counting"], "is not in your submission"),
    "fifo_named_like_a_task": (lambda d: ((d / "counting.py").unlink(), os.mkfifo(d / "counting.py")),
                               ["counting"], "is not in your submission"),
    "link_to_the_solutions": (lambda d: ((d / "counting.py").unlink(),
                                         (d / "counting.py").symlink_to(SOLUTIONS / "counting.py")),
                              ["counting"], "links are not followed"),
    "odd_file_names": (lambda d: [(d / n).write_bytes(b"x = 1\n") for n in ("caf\u00e9.py", "bad name.py")]
                       + [os.close(os.open(bytes(d) + b"/\xff\xfe.py", os.O_CREAT | os.O_WRONLY, 0o644))],
                       [], "was ignored"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_folder_is_graded(suite: Suite, reference_copy: Path, name: str) -> None:
    make, zeros, text = BAD_INPUTS[name]
    make(reference_copy)
    started = suite.grader.worker.starts
    result = suite.grader.grade(reference_copy, student="bad")
    _check_bad(result, zeros, text)
    check_contained(suite, result, started)


def _shown(result: SubmissionResult) -> str:
    """Everything a student reads about a submission: the problem, the notes, every feedback."""
    feedback = [c.feedback for t in result.tasks for c in t.checks]
    parts = [getattr(result, "problem", ""), *result.notes, *feedback]
    return "\n".join(parts)


def _check_bad(result: SubmissionResult, zeros: list[str], text: str) -> None:
    shown = _shown(result)
    assert text in shown, shown[:3000]
    for task in result.tasks:
        assert task.score == (0 if task.task in zeros else task.max_score), task.task


def _zip_cases(folder: Path) -> dict[str, tuple[Path, list[str], str]]:
    every = ["tinynet", "delivery", "counting", "containers", "checkpoint", "dropout", "numpy_forward"]
    files = _reference_files()
    others = {k: v for k, v in files.items() if k != "counting.py"}
    bomb = {**files, "counting.py": b"#" * (200 * 1024 * 1024)}
    corrupt = folder / "corrupt.zip"
    _zip(corrupt, files)
    data = bytearray(corrupt.read_bytes())
    header = data.find(b"counting.py") + len("counting.py")
    data[header + 10 : header + 200] = os.urandom(190)  # damage the deflate stream of one entry
    corrupt.write_bytes(bytes(data))
    many = folder / "many.zip"
    _zip(many, {**files, **{f"junk/{i}.txt": b"" for i in range(3000)}})
    return {
        "traversal": (_zip(folder / "traversal.zip", {**{f"hw/{k}": v for k, v in others.items()},
                                                      "../../counting.py": files["counting.py"]}),
                      ["counting"], "outside the folder"),
        "links": (_zip(folder / "links.zip", others,
                       {"counting.py": str(SOLUTIONS / "counting.py")}), ["counting"],
                  "links are not followed"),
        "bomb": (_zip(folder / "bomb.zip", bomb), ["counting"], "unpacks to more"),
        "corrupt": (corrupt, ["counting"], "counting.py"),
        "too_many_entries": (many, every, "entries"),
        "not_a_zip": ((folder / "fake.zip", (folder / "fake.zip").write_bytes(b"PK\x03\x04 nope"))[0], every,
                      "not a readable zip"),
        "empty_zip": (_zip(folder / "empty.zip", {}), every, "no Python files"),
    }


def test_bad_zips_are_graded(suite: Suite, tmp_path: Path) -> None:
    started = suite.grader.worker.starts
    for name, (path, zeros, text) in _zip_cases(tmp_path).items():
        result = suite.grader.grade(path, student=name)
        shown = _shown(result)
        assert text in shown, (name, shown[:2000])
        for task in result.tasks:
            assert task.score == (0 if task.task in zeros else task.max_score), (name, task.task)
        check_contained(suite, result, started)
    assert not (tmp_path.parent / "counting.py").exists()


def test_empty_and_nested_folders_are_graded(suite: Suite, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = suite.grader.grade(empty, student="empty")
    assert result.score == 0 and "no Python files" in _shown(result)
    deep = tmp_path / "deep"
    folder = deep
    for _ in range(200):
        folder = folder / "d"
    folder.mkdir(parents=True)
    result = suite.grader.grade(deep, student="deep")
    assert result.score == 0 and "no Python files" in _shown(result)


# -- a batch mixing hostile, broken and clean students ---------------------------------------
def test_batch_with_hostile_students_completes(suite: Suite, tmp_path: Path) -> None:
    world = suite.world
    klass = tmp_path / "class"
    klass.mkdir()
    students = {"ada": None, "mallory": "fork_swarm", "trudy": "forged_results", "eve": "kill_parent",
                "oscar": "memory_python", "walter": "read_secrets"}
    targets = {case.name: case for case in CASES}
    for student, attack in students.items():
        folder = klass / student
        shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("graders", "__pycache__"))
        if attack:
            build_submission(world, folder, targets[attack])
    _zip(klass / "zed.zip", {"counting.py": b"#" * (50 * 1024 * 1024)})
    (klass / "bob.zip").write_bytes(b"not a zip")
    out = tmp_path / "out"
    summary = grade_batch(world.kit, klass, out, jobs=2)
    assert summary.graded == len(students) + 2
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert set(rows) == {*students, "zed", "bob"}
    assert rows["ada"]["total"] == "100"
    for student, attack in students.items():
        data = json.loads((out / student / "results.json").read_text())
        target = targets[attack].target.removesuffix(".py") if attack else None
        by_task: dict[str, float] = {}
        for test in data["tests"]:
            by_task[test["tags"][0]] = by_task.get(test["tags"][0], 0) + test["score"]
        for task in world.kit.assignment().tasks:
            assert by_task[task.id] == (0 if task.id == target else task.points), (student, task.id)
        text = json.dumps(data, ensure_ascii=False) + (out / student / "feedback.md").read_text()
        assert world.secret_token not in text and world.file_token not in text
        assert len(json.dumps(data)) < MAX_RESULTS_BYTES
    assert_no_strays({suite.grader.worker.sandbox_pid} if suite.grader.worker.sandbox_pid else set())
    assert world.host_markers() == []


# -- crash safety: kill the grading process, rerun, lose nothing, grade nobody twice ----------------
def test_killed_batch_resumes_without_grading_twice(world: World, tmp_path: Path) -> None:
    kit_root = tmp_path / "kit"
    kit_root.mkdir()
    toml = (world.kit_root / "grading.toml").read_text()
    toml = toml.replace("uid_base = 61000", f"uid_base = {CLI_UID_BASE}")
    toml = toml.replace("time_limit = 30", "time_limit = 5").replace("time_limit = 20", "time_limit = 5")
    assert f"uid_base = {CLI_UID_BASE}" in toml
    (kit_root / "grading.toml").write_text(toml)
    shutil.copytree(world.kit_root / "solutions", kit_root / "solutions")
    klass = tmp_path / "class"
    names = ["s1", "s2", "s3", "s4", "s5", "s6"]
    for name in names:
        shutil.copytree(SOLUTIONS, klass / name, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    (klass / "s4" / "counting.py").write_text("import time\ntime.sleep(60)\n")  # a slow one
    out = tmp_path / "out"
    command = [str(ROOT / ".venv" / "bin" / "autograder"), "grade", str(klass), "--out", str(out),
               "--jobs", "1", "--quiet", "--kit", str(kit_root)]
    book = out / "gradebook.sqlite"
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    before: list[tuple[int, str, str]] = []
    while time.monotonic() < deadline and first.poll() is None:
        if book.exists():
            try:
                with sqlite3.connect(book) as db:
                    before = db.execute("SELECT id, student, graded_at FROM gradings ORDER BY id").fetchall()
            except sqlite3.Error:
                before = []
            if len(before) >= 2:
                break
        time.sleep(0.1)
    assert first.poll() is None, first.communicate()
    first.kill()
    first.communicate()
    assert 2 <= len(before) < len(names)
    assert_no_strays(set(), CLI_UID_BASE, wait=10.0)

    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    with sqlite3.connect(book) as db:
        rows = db.execute("SELECT id, student, graded_at, current FROM gradings ORDER BY id").fetchall()
    assert sorted(r[1] for r in rows) == names  # one row per student: nobody graded twice
    assert all(r[3] == 1 for r in rows)
    kept = {r[1]: (r[0], r[2]) for r in rows}
    for row_id, student, graded_at in before:
        assert kept[student] == (row_id, graded_at)  # graded before the kill: kept as it was
    grades = (out / "grades.csv").read_text().splitlines()
    assert sorted(line.split(",")[0] for line in grades[1:]) == names
    assert_no_strays(set(), CLI_UID_BASE, wait=10.0)


# -- startup: refuse clearly without isolation ------------------------------------------------
def test_missing_bubblewrap_is_refused_clearly(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which

    def which(name: str, *args: object, **kwargs: object) -> str | None:
        return None if name == "bwrap" else real_which(name)

    monkeypatch.setattr(sandbox.shutil, "which", which)
    with pytest.raises(SandboxUnavailable) as refused:
        check_available(kit.sandbox.uid_base)
    assert "bubblewrap" in str(refused.value) and "--no-sandbox" in str(refused.value)


@pytest.mark.parametrize("bwrap", ["missing", "broken"])
def test_cli_refuses_to_grade_without_the_sandbox(tmp_path: Path, bwrap: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("setpriv", "true", "sh"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    if bwrap == "broken":
        script = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
        (bin_dir / "bwrap").write_text(script)
        (bin_dir / "bwrap").chmod(0o755)
    klass = tmp_path / "class"
    shutil.copytree(SOLUTIONS, klass / "ada", ignore=shutil.ignore_patterns("graders", "__pycache__"))
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "autograder"), "grade", str(klass), "--out", str(tmp_path / "out"),
         "--kit", str(ROOT)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PATH": str(bin_dir)},
    )
    assert done.returncode == 3, done.stderr
    message = " ".join(done.stderr.split())
    assert "bubblewrap" in message and "--no-sandbox" in message
    assert not (tmp_path / "out" / "gradebook.sqlite").exists()


def _grade_task_in_process(kit: Kit, folder: Path, task_id: str) -> list[Any]:
    """One task of `folder` graded by the instructor's graders, its probes run in this process."""
    assignment = kit.assignment("nn_module")
    graders = load_graders(assignment)
    task = assignment.task(task_id)
    session = InProcessSession(task.id, folder, task.module, graders.probes_source)
    return [judge.run_check(c, session, graders, task) for c in graders.for_task(task.id)]


@pytest.mark.parametrize("task", STRUCTURE_FORGERIES)
def test_a_forged_structure_gains_nothing_even_past_the_integrity_check(
    kit: Kit, reference_copy: Path, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    """The last line of defence: with the worker's integrity check switched off (as if a forgery had
    found a way round it), structure probes answered as a correct model would still earn nothing,
    because every structural check's points rest on a run with hidden weights (its challenge)."""
    monkeypatch.setattr(Snapshot, "changed", lambda self: "")
    monkeypatch.setattr(sys, "path", list(sys.path))
    source = (HOSTILE / "structure_forgeries" / f"{task}.py.txt").read_text()
    honest = reference_copy.parent / "honest"
    shutil.copytree(reference_copy, honest)
    (honest / f"{task}.py").write_text(without_forgery(source))
    (reference_copy / f"{task}.py").write_text(source)
    try:
        forged = _grade_task_in_process(kit, reference_copy, task)
        plain = _grade_task_in_process(kit, honest, task)
    finally:  # the students' modules go with the test
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", "") or "").startswith(str(reference_copy.parent)):
                del sys.modules[name]
    assert sum(c.score for c in forged) <= sum(c.score for c in plain) == 0
    keys = {c.name: c.message_key for c in forged}
    assert "engine.tampered" not in keys.values()  # the integrity check really was off
    # The forged structure was believed; only the challenge's run stopped it.
    stopped = [name for name, key in keys.items() if key == "common.challenge_values"]
    assert stopped, keys
