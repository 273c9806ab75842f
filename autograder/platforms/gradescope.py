"""Gradescope: build `autograder.zip`, and the entry point its `run_autograder` calls.

The zip (layout per ../shared/notes/lms.md §1.2) holds at its root `setup.sh`, `run_autograder`,
`gradescope.json` (which assignment, hidden-check visibility, kit version, build time), the
engine package `autograder/`, `grading.toml`, `pyproject.toml`, `constraints.txt` (the exact versions
setup.sh installs), `README.md` (pyproject names it)
and `solutions/<id>/` with the reference solutions and the hidden graders: the autograder image
is instructor-private. Never `.venv`, caches or the kit's tests.

On Gradescope the zip is unpacked to /autograder/source, `setup.sh` runs once as root while the
image is built, and for every submission `run_autograder` runs
`python -m autograder.platforms.gradescope`, which grades /autograder/submission and writes
/autograder/results/results.json, always: a crash still writes a 0 with the reason.

The root (/autograder) is configurable: `--root` or the environment variable `AUTOGRADER_ROOT`
(tests unpack the zip into a temporary stand-in). `AUTOGRADER_PYTHON` picks the interpreter in
`run_autograder`; `AUTOGRADER_SANDBOX` (or `--sandbox`) is `auto` (default), `on` or `off`.

Sandbox: with `auto`, student code runs in the bubblewrap sandbox when the container allows it.
Docker containers usually do not, so the fallback runs the worker bare but, when we are root,
as an unprivileged uid (`setpriv`, Gradescope's own best practice) with the solutions folder
closed to it. The fallback is logged to stdout (which Gradescope shows to instructors only) and
recorded in `extra_data.sandbox`, not in the student-visible output: telling students that
isolation is off would only invite attempts to use it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder import __version__
from autograder.archive import write_zip
from autograder.config import load_kit
from autograder.errors import AutograderError, ConfigError, SandboxUnavailable, WorkerProtocolError
from autograder.exam.plan import plan_for
from autograder.grading.grader import Grader, worker_launch
from autograder.grading.options import GradeOptions
from autograder.output import reports
from autograder.platforms.gradescope_output import with_markdown_outputs
from autograder.sandbox import launch
from autograder.sandbox.client import WorkerProcess
from autograder.sandbox.launch import Launch
from autograder.submissions.students import student_id

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
DEFAULT_HIDDEN_VISIBILITY = "after_published"
CONFIG_NAME = "gradescope.json"
SANDBOX_MODES = ("auto", "on", "off")
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache",
             ".ipynb_checkpoints"}
SKIP_SUFFIXES = (".pyc", ".pyo")

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image (base image: Ubuntu 22.04).
# Built by `autograder gradescope build` (torch-autograder {version}) for assignment {assignment}.
# Memory: the grader and its worker each load torch; raise the autograder's memory limit above
# Gradescope's default (768 MB) in the assignment's autograder settings.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
# python3.11: the kit requires Python 3.11 (pyproject.toml); Ubuntu 22.04 ships it as python3.11.
# bubblewrap: the sandbox for student code, used when the container allows it (run_autograder
# checks and otherwise runs the worker as an unprivileged user; setpriv comes with util-linux).
apt-get install -y --no-install-recommends python3 python3-pip python3.11 python3.11-venv \\
    bubblewrap util-linux ca-certificates
python3.11 -m venv /autograder/venv
# torch's CPU-only build first, from PyTorch's CPU wheel index: about 0.2 GB, where the default
# index's build for Linux is the CUDA one with its nvidia wheels (about 3 GB) and Gradescope has no
# GPU. Its version {torch_cpu} satisfies the kit's pin torch=={torch} (a local version label), so
# the line after it keeps this torch. Then the kit with its grading extra, at the exact versions of
# constraints.txt (pyproject.toml only gives ranges, so that a student's install keeps their torch).
/autograder/venv/bin/pip install --no-cache-dir --index-url {cpu_index} "torch=={torch_cpu}"
/autograder/venv/bin/pip install --no-cache-dir -c /autograder/source/constraints.txt \\
    -e '/autograder/source[instructor]'
/autograder/venv/bin/python -c "import torch, autograder; print('torch', torch.__version__)"
chmod 0755 /autograder/source/run_autograder
"""

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# What Gradescope shows students while hidden checks wait for publishing (its specs.md: "If test
# cases are hidden, students will not be able to see their total score").
HIDDEN_TOTAL_NOTE = {
    "after_published": "students see neither the hidden checks nor their total score until you publish "
                       "the grades (Review Grades > Publish)",
    "after_due_date": "students see neither the hidden checks nor their total score until after the due "
                      "date (the late due date, if late submissions are allowed)",
    "hidden": "students never see the hidden checks, nor their total score",
    "visible": "students see every check and their total score at once",
}


def torch_pin(kit_root: Path) -> str:
    """The torch version grading is pinned to, from the kit's constraints.txt (`torch==X.Y.Z`)."""
    path = kit_root / "constraints.txt"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the kit's pinned versions ({exc.strerror or exc})") from None
    for line in lines:
        name, sep, version = line.split("#", 1)[0].partition("==")
        if name.strip() == "torch" and sep:
            return version.strip()
    raise ConfigError(f"{path}: no exact torch pin (torch==X.Y.Z): add one")


RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission, from /autograder, as root. It grades
# $ROOT/submission and writes $ROOT/results/results.json -- always, even when grading crashes.
# AUTOGRADER_ROOT stands in for /autograder (tests); AUTOGRADER_PYTHON picks the interpreter.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
RESULTS="$ROOT/results/results.json"
PY="${AUTOGRADER_PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/venv/bin/python" ]; then PY="$ROOT/venv/bin/python"; else PY=python3; fi
fi
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
cd "$SOURCE" && PYTHONPATH="$SOURCE" "$PY" -m autograder.platforms.gradescope --root "$ROOT" "$@"
status=$?
if [ ! -s "$RESULTS" ]; then
  # Python could not even start (or was killed): still hand Gradescope a valid results.json.
  cat > "$RESULTS" <<EOF
{"score": 0, "output_format": "text",
 "output": "The autograder could not run (exit status $status): not graded. Please tell your instructor.",
 "extra_data": {"error": "run_autograder: python exited with status $status"}}
EOF
fi
exit 0
"""


# -- building the zip --------------------------------------------------------------------------
def _files_under(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and not path.name.endswith(SKIP_SUFFIXES):
            found.append(path)
    return found


def build_gradescope_zip(
    kit_root: Path,
    assignment_id: str,
    out: Path,
    *,
    hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY,
) -> Path:
    """Write the autograder.zip for one assignment; returns `out`.

    `hidden_visibility` is the Gradescope visibility of hidden checks (public ones are always
    `visible`): `after_published` (default), `after_due_date`, `hidden` (students then cannot see
    their total either) or `visible`.
    """

    if hidden_visibility not in VISIBILITIES:
        raise ConfigError(
            f"hidden visibility must be one of {', '.join(VISIBILITIES)}, got {hidden_visibility!r}"
        )
    kit_root = kit_root.resolve()
    kit = load_kit(kit_root)
    assignment = kit.assignment(assignment_id)
    solutions = assignment.solutions
    if not (solutions / "graders").is_dir():
        raise ConfigError(f"{solutions}/graders not found: the zip needs the assignment's graders")
    package = Path(__file__).resolve().parents[1]
    config = {
        "assignment": assignment.id,
        "title": assignment.title,
        "hidden_visibility": hidden_visibility,
        "kit_version": __version__,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    torch = torch_pin(kit_root)
    setup = SETUP_SH.format(version=__version__, assignment=assignment.id, torch=torch,
                            torch_cpu=f"{torch}+cpu", cpu_index=TORCH_CPU_INDEX)
    files = {
        "setup.sh": setup.encode(),
        "run_autograder": RUN_AUTOGRADER.encode(),
        CONFIG_NAME: (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode(),
    }
    for name in ("grading.toml", "pyproject.toml", "constraints.txt", "README.md"):
        if (kit_root / name).is_file():
            files[name] = (kit_root / name).read_bytes()
    for path in _files_under(package):
        files[f"autograder/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    for path in _files_under(solutions):
        files[f"solutions/{assignment.id}/{path.relative_to(solutions).as_posix()}"] = path.read_bytes()
    write_zip(out, files, executable=("setup.sh", "run_autograder"))
    return out


# -- running on Gradescope ---------------------------------------------------------------------
def _log(message: str) -> None:
    """stdout: Gradescope keeps it in results/stdout, shown to instructors only."""
    print(f"[autograder] {message}", flush=True)


def _student(root: Path) -> str:
    try:
        meta = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        users = meta.get("users") or []
        names = [str(u.get("email") or u.get("id") or "") for u in users if isinstance(u, dict)]
        return student_id(",".join(n for n in names if n)) or "submission"  # the one identity rule
    except (OSError, ValueError, AttributeError):
        return "submission"


def _submission_path(root: Path) -> Path:
    """The submission folder; a lone .zip inside it (an upload of the zip itself) is graded as is."""
    folder = root / "submission"
    if folder.is_dir():
        entries = [p for p in folder.iterdir() if not p.name.startswith((".", "__MACOSX"))]
        if len(entries) == 1 and entries[0].suffix.lower() == ".zip" and entries[0].is_file():
            return entries[0]
    return folder


def _read_config(source: Path) -> dict[str, Any]:
    path = source / CONFIG_NAME
    try:
        config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))  # written by `gradescope build`
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: build the zip with `autograder gradescope build`") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if config.get("hidden_visibility", DEFAULT_HIDDEN_VISIBILITY) not in VISIBILITIES:
        raise ConfigError(f"{path}: hidden_visibility must be one of {', '.join(VISIBILITIES)}")
    return config


def crash_results(reason: str, seconds: float = 0.0) -> dict[str, Any]:
    """results.json for a submission that could not be graded: 0 points and why."""
    return {
        "score": 0.0,
        "execution_time": round(seconds, 3),
        "output": (
            "The autograder could not grade this submission, so it scored 0 for now. "
            f"Please tell your instructor. Reason: {reason}"
        ),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "extra_data": {"error": reason, "kit_version": __version__},
        "tests": [],
    }


def _write_results(path: Path, data: dict[str, Any]) -> None:
    """Build the JSON in memory and replace the file in one step (never a half-written file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _unprivileged(launch: Any, uid: int) -> Any | None:
    """The same worker command run as `uid` via setpriv, when we are root and setpriv exists."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    drop = (setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
            "--inh-caps=-all", "--bounding-set=-all")
    return Launch(drop + tuple(launch.argv), dict(launch.env), False)


def _worker(kit: Any, use_sandbox: bool, how: str) -> tuple[WorkerProcess, str]:
    """The one worker this run grades with: sandboxed, else bare as an unprivileged uid if we can."""
    if use_sandbox:
        return WorkerProcess(worker_launch(kit, 0, sandbox=True)), how
    bare = launch.bare_launch()
    dropped = _unprivileged(bare, kit.sandbox.uid_base)
    if dropped is not None:
        worker = WorkerProcess(dropped)
        (kit.root / "solutions").chmod(0o700)  # the reference and hidden graders stay root's
        try:
            worker.start()
            return worker, f"bare, as uid {kit.sandbox.uid_base} (bubblewrap unavailable)"
        except WorkerProtocolError:
            worker.stop()
            _log("note: the worker could not start as an unprivileged user; running it as root")
    return WorkerProcess(bare), how


def _grade(root: Path, source: Path, config: dict[str, Any], mode: str) -> tuple[dict[str, Any], str]:
    kit = load_kit(source)
    assignment = kit.assignment(config.get("assignment"))
    if mode == "on":
        launch.check_available(kit.sandbox.uid_base)  # refuses with the reason
        use_sandbox, how = True, "bubblewrap"
    elif mode == "off":
        use_sandbox, how = False, "off (requested)"
    else:
        try:
            launch.check_available(kit.sandbox.uid_base)
            use_sandbox, how = True, "bubblewrap"
        except SandboxUnavailable as exc:
            use_sandbox, how = False, "bare (bubblewrap unavailable)"
            _log(f"note: the sandbox is not available in this container ({exc}); grading without it")
    if mode == "auto" and not use_sandbox:
        worker, how = _worker(kit, use_sandbox, how)
    else:
        worker = WorkerProcess(worker_launch(kit, 0, use_sandbox))
    try:
        if worker.proc is None:
            worker.spawn()
        options = GradeOptions(sandbox=use_sandbox)
        with Grader(kit, assignment.id, options, plan=plan_for(kit, assignment.id), worker=worker) as grader:
            _log(f"grading {assignment.id} ({how})")
            result = grader.grade(_submission_path(root), student=_student(root))
    finally:
        worker.stop()
    data = with_markdown_outputs(reports.gradescope_results(result))  # code shows as code
    hidden = config.get("hidden_visibility", DEFAULT_HIDDEN_VISIBILITY)
    for test in data["tests"]:
        if test.get("visibility") == reports.HIDDEN:
            test["visibility"] = hidden
    return data, how


def run(root: Path | None = None, *, sandbox: str | None = None) -> dict[str, Any]:
    """Grade `<root>/submission` into `<root>/results/results.json`; returns what was written.

    `root` defaults to `$AUTOGRADER_ROOT`, else /autograder; the kit is `<root>/source`.
    `sandbox` (`auto`, `on`, `off`) defaults to `$AUTOGRADER_SANDBOX`, else `auto`.
    """
    started = time.monotonic()
    root = Path(root or os.environ.get("AUTOGRADER_ROOT") or "/autograder")
    mode = sandbox or os.environ.get("AUTOGRADER_SANDBOX") or "auto"
    results_path = root / "results" / "results.json"
    try:
        if mode not in SANDBOX_MODES:
            raise ConfigError(f"sandbox mode must be one of {', '.join(SANDBOX_MODES)}, got {mode!r}")
        source = root / "source"
        config = _read_config(source)
        data, how = _grade(root, source, config, mode)
        data["extra_data"].update({
            "graded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "sandbox": how,
            "zip_built_at": config.get("built_at", ""),
        })
        _log(f"score {data['score']:g} / {data['extra_data'].get('max_score', '?')}")
    except AutograderError as exc:
        _log(f"error: {exc}")
        data = crash_results(str(exc), time.monotonic() - started)
    except BaseException as exc:  # whatever happens, Gradescope gets a results.json
        traceback.print_exc(file=sys.stdout)
        data = crash_results(f"{type(exc).__name__}: {exc}", time.monotonic() - started)
        _write_results(results_path, data)
        if not isinstance(exc, Exception):
            raise
        return data
    _write_results(results_path, data)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.platforms.gradescope",
                                     description=run.__doc__)
    parser.add_argument("--root", type=Path, default=None, help="Stand-in for /autograder.")
    parser.add_argument("--sandbox", choices=SANDBOX_MODES, default=None,
                        help="auto: bubblewrap if it works; on: require it; off: trusted code.")
    args = parser.parse_args(argv)
    run(args.root, sandbox=args.sandbox)
    return 0


if __name__ == "__main__":
    sys.exit(main())
