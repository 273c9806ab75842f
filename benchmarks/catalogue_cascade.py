"""How many checks one mistake costs (issue 24): every catalogued single mistake graded, and the
histogram of the checks it fails, for today's graders or an earlier revision's.

    .venv/bin/python benchmarks/catalogue_cascade.py [--base REV [--todays-catalogue]] [--assignment ID]
                                                     [--json OUT] [--quiet]

Each `[[wrong]]` entry of `solutions/<id>/graders/misconceptions.toml` is one mistake in one file
(the reference with one edit). It is graded (sandboxed when bubblewrap works) and the checks of its
task that fail are counted. `--base REV` grades the catalogue and graders of that revision (read
from git, nothing checked out) with this engine; its catalogue is also what is graded, so run the
script twice (`--base main` and without) to compare before and after (`--todays-catalogue` grades
today's entries, the new ones too, with the old graders). `--json` writes every entry's failing
checks, to diff two runs. Besides the checks, each mistake's properties charged are counted: the
fewest properties of today's contract matrices (graders/hidden/contract.toml) that explain every
check it fails (each check proves one of them, or relies on one). Entries in the catalogue's short
form are completed as the kit's tests complete them (autograder/authoring/catalogue_forms.py), and each
assignment ends with how many mistakes lose exactly their catalogued `fails` and touch no other task
(issue 44: all of them, once every property has one owner).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from challenge_cost import base_kit  # noqa: E402

from autograder.authoring import catalogue_forms  # noqa: E402
from autograder.config import load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.grading.grader import Grader  # noqa: E402
from autograder.grading.options import GradeOptions  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402


def build(solutions: Path, section: dict, entry: dict, dest: Path) -> Path:
    """The reference files with the entry's edit (each `old` replaced once, in order)."""
    dest.mkdir(parents=True)
    for name in [*(t["file"] for t in section["tasks"].values()), *section.get("given", [])]:
        shutil.copy(solutions / name, dest / name)
    target = dest / entry["file"]
    text = target.read_text(encoding="utf-8")
    for old, new in entry["replace"]:
        text = text.replace(old, new, 1)
    target.write_text(text, encoding="utf-8")
    return dest


def grade_catalogue(root: Path, assignment: str, sandbox: bool, tmp: Path,
                    catalogue: Path | None = None) -> dict[str, dict]:
    """entry id -> its task, the checks of that task it fails, the points lost, other tasks hit.
    `catalogue`: another misconceptions.toml to grade (default: the graded revision's own)."""
    kit = load_kit(root)
    with (root / "grading.toml").open("rb") as f:
        section = tomllib.load(f)["assignments"][assignment]
    solutions = root / "solutions" / assignment
    catalogue = catalogue or solutions / "graders" / "misconceptions.toml"
    # the short forms (an entry's task, file and fails left out) completed as the kit's tests do
    wrong = catalogue_forms.complete_wrong(
        kit.assignment(assignment), tomllib.loads(catalogue.read_text(encoding="utf-8")).get("wrong", []),
        catalogue_forms.load_contract(kit.assignment(assignment)))
    found: dict[str, dict] = {}
    with Grader(kit, assignment, GradeOptions(sandbox=sandbox)) as grader:
        for entry in wrong:
            folder = build(solutions, section, entry, tmp / assignment / entry["id"])
            result = grader.grade(folder, student=entry["id"])
            task = result.task(entry["task"])
            found[entry["id"]] = {
                "task": entry["task"],
                "fails": sorted(c.check_id for c in task.checks if not c.passed),
                "catalogued": sorted(entry.get("fails", [])),
                "lost": round(task.max_score - task.score, 6),
                "of": task.max_score,
                "others": sorted(t.task for t in result.tasks
                                 if t.task != entry["task"] and t.score < t.max_score),
            }
    return found


def matrices() -> dict[str, dict]:
    """assignment -> today's contract matrix (the same properties whichever graders are measured)."""
    kit = load_kit(ROOT)
    return {path.parents[2].name: catalogue_forms.load_contract(kit.assignment(path.parents[2].name))
            for path in (ROOT / "solutions").glob("*/graders/hidden/contract.toml")}


def properties_charged(fails: list[str], table: dict) -> int:
    """The fewest properties of the task that explain every failing check (each proves one of them,
    or relies on one): how many properties one mistake is charged for, whatever the checks' count."""
    explains: dict[str, set[str]] = {}
    for prop in table.get("properties", []):
        for ids in prop["proven_by"].values():
            for check in ids:
                explains.setdefault(check, set()).add(prop["id"])
    for check, needs in table.get("relies_on", {}).items():
        explains.setdefault(check, set()).update(needs)
    props = sorted(set().union(*explains.values())) if explains else []
    for size in range(1, len(fails) + 1):
        for chosen in itertools.combinations(props, size):
            if all(explains.get(c, set()) & set(chosen) for c in fails):
                return size
    return len(fails)


def histogram(found: dict[str, dict], key: str = "fails", label: str = "checks failed") -> list[str]:
    counts = Counter(len(e[key]) if key == "fails" else e[key] for e in found.values())
    total = len(found) or 1
    lines = [f"{label} per mistake: mistakes"]
    for n in sorted(counts):
        lines.append(f"  {n:2d}: {counts[n]:4d}  ({100 * counts[n] / total:4.1f}%)  " + "#" * counts[n])
    several = sum(c for n, c in counts.items() if n >= 2)
    mean = sum(n * c for n, c in counts.items()) / total
    if key != "fails":
        lines.append(f"  {several} ({100 * several / total:.1f}%) charged for 2 or more properties; "
                     f"mean {mean:.2f}")
        return lines
    half = sum(1 for e in found.values() if e["lost"] > e["of"] / 2)
    lines.append(f"  {len(found)} mistakes; {several} ({100 * several / total:.1f}%) fail 2 or more checks; "
                 f"{half} lose more than half of their task; mean {mean:.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", help="grade the catalogue and graders of this git revision")
    parser.add_argument("--assignment", action="append", help="only these assignments (default: both)")
    parser.add_argument("--json", type=Path, help="write every entry's failing checks here")
    parser.add_argument("--quiet", action="store_true", help="only the histograms")
    parser.add_argument("--todays-catalogue", action="store_true",
                        help="with --base: today's catalogue (its new entries too), graded the old way")
    args = parser.parse_args()
    try:
        check_available(load_kit(ROOT).sandbox.uid_base)
        sandbox = True
    except SandboxUnavailable:
        sandbox = False
    assignments = args.assignment or ["nn_module", "tensors_autograd"]
    report: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        root = base_kit(args.base, tmp / "base") if args.base else ROOT
        for assignment in assignments:
            today = ROOT / "solutions" / assignment / "graders" / "misconceptions.toml"
            report[assignment] = grade_catalogue(root, assignment, sandbox, tmp,
                                                 today if args.todays_catalogue else None)
    everything: dict[str, dict] = {}
    contract = matrices()
    for assignment, found in report.items():
        for e in found.values():
            e["properties"] = properties_charged(e["fails"], contract[assignment][e["task"]])
        print(f"== {assignment} ({'graders of ' + args.base if args.base else 'graders now'})")
        if not args.quiet:
            for entry_id, e in found.items():
                extra = f"  OTHER TASKS: {e['others']}" if e["others"] else ""
                if e["fails"] != e["catalogued"]:
                    extra += f"  CATALOGUED: {', '.join(e['catalogued'])}"
                fails = ", ".join(e["fails"])
                print(f"  {len(e['fails'])}  -{e['lost']:g}/{e['of']:g}  {entry_id}: {fails}{extra}")
        print("\n".join(histogram(found)))
        print("\n".join(histogram(found, "properties", "properties charged")))
        everything.update({f"{assignment}:{k}": v for k, v in found.items()})
        exact = sum(1 for e in found.values() if e["fails"] == e["catalogued"] and not e["others"])
        print(f"  {exact} of {len(found)} mistakes lose exactly their catalogued `fails` (and no other task)")
    print("== " + ("both assignments" if len(report) == 2 else ", ".join(report)))
    print("\n".join(histogram(everything)))
    print("\n".join(histogram(everything, "properties", "properties charged")))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main()
