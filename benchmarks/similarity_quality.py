"""How well similarity ranks disguised copies above independent work, by method; and how fast it is.

    .venv/bin/python benchmarks/similarity_quality.py [--students 150] [--copiers 30] [--seed 7]
                                                     [--speed 500] [--jobs 2] [--no-copydetect]

A class (benchmarks/similarity_class.py) of independent students in varied styles, plus copiers who
each copy 1 to 4 files of one classmate, every planted file at one of five disguise levels. Every
(pair, task file) is ranked by score; with k = the planted items, precision and recall at k, the
average precision, the recall per disguise level, and what the report's threshold flags. Compared
side by side: the syntax-tree fingerprints (the default), winnowed tokens, both, and copydetect 0.5.0
(winnowed pygments tokens, a well-kept library: measured when it is installed). Then the speed
line: `run_similarity` end to end (read, fingerprint, compare, CSV, pages) on `--speed` submissions of
seven files with `--jobs` processes, in a child process whose peak memory is reported.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from similarity_class import LEVELS, make_class, write_class  # noqa: E402

from autograder.config import load_kit  # noqa: E402
from autograder.integrity.corpus import boilerplate  # noqa: E402
from autograder.integrity.similarity import CLASS, DEFAULT_THRESHOLD, Document, Source, compare  # noqa: E402

Item = tuple[frozenset[str], str]  # ({student, student}, task)
Ranked = tuple[list[tuple[Item, float]], list[tuple[frozenset[str], float]]]  # per file, per pair


def documents(people: dict[str, dict[str, str]], files: dict[str, str]) -> list[Document]:
    return [
        Document(Source(CLASS, student), files[name], name, text)
        for student, own in sorted(people.items())
        for name, text in sorted(own.items())
    ]


def rank_kit(method: str) -> Callable[[list[Document], dict[str, list[str]]], Ranked]:
    def rank(docs: list[Document], boiler: dict[str, list[str]]) -> Ranked:
        found = compare(docs, boiler, method=method, floor=1e-9, jobs=1)
        return (
            [((frozenset((m.a.source.name, m.b.source.name)), m.task), m.score) for m in found.matches],
            [(frozenset((p.a.name, p.b.name)), p.score) for p in found.pairs],
        )

    return rank


def rank_copydetect(docs: list[Document], boiler: dict[str, list[str]], noise: int = 25) -> Ranked:
    """copydetect's similarity of each pair of files (the larger of its two containments); a pair of
    students' is the sum over their files."""
    from copydetect import CopyDetector

    ranked = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in sorted({d.task for d in docs}):
            folder, stubs = Path(tmp) / task, Path(tmp) / f"{task}-boilerplate"
            folder.mkdir()
            stubs.mkdir()
            for i, text in enumerate(boiler.get(task, [])):
                (stubs / f"b{i}.py").write_text(text, encoding="utf-8")
            owner = {}
            for d in docs:
                if d.task == task:
                    path = folder / f"{d.source.name}.py"
                    path.write_text(d.text, encoding="utf-8")
                    owner[str(path)] = d.source.name
            detector = CopyDetector(
                test_dirs=[str(folder)],
                boilerplate_dirs=[str(stubs)],
                extensions=["py"],
                silent=True,
                autoopen=False,
                display_t=0.0,
                noise_t=noise,
                guarantee_t=noise,
            )
            detector.run()
            seen = set()
            for i, a in enumerate(detector.test_files):
                for j, b in enumerate(detector.ref_files):
                    pair = frozenset((owner[a], owner[b]))
                    if a == b or pair in seen:
                        continue
                    seen.add(pair)
                    score = float(max(detector.similarity_matrix[i, j]))
                    if score > 0:
                        ranked.append(((pair, task), score))
    pairs: dict[frozenset[str], float] = {}
    for (pair, _), score in ranked:
        pairs[pair] = pairs.get(pair, 0.0) + score
    return sorted(ranked, key=lambda r: -r[1]), sorted(pairs.items(), key=lambda r: -r[1])


def pair_quality(
    ranked: list[tuple[frozenset[str], float]], planted: set[frozenset[str]], threshold: float | None
) -> dict[str, float]:
    k = len(planted)
    hits = sum(pair in planted for pair, _ in ranked[:k])
    precisions, found = [], 0
    for rank, (pair, _) in enumerate(ranked, start=1):
        if pair in planted:
            found += 1
            precisions.append(found / rank)
    out = {"p_at_k": hits / k, "r_at_k": hits / k, "ap": sum(precisions) / k}
    if threshold is not None:
        flagged = [pair for pair, score in ranked if score >= threshold]
        out["flagged"] = len(flagged)
        out["flagged_precision"] = sum(p in planted for p in flagged) / max(1, len(flagged))
        out["flagged_recall"] = sum(p in planted for p in flagged) / k
        out["top_independent"] = max((score for pair, score in ranked if pair not in planted), default=0.0)
    return out


def quality(
    ranked: list[tuple[Item, float]], planted: dict[Item, int], threshold: float | None
) -> dict[str, float]:
    """Precision and recall at k = the planted items, average precision, recall at k per level."""
    k = len(planted)
    top = [item for item, _ in ranked[:k]]
    hits = sum(item in planted for item in top)
    precisions, found = [], 0
    for rank, (item, _) in enumerate(ranked, start=1):
        if item in planted:
            found += 1
            precisions.append(found / rank)
    out = {"p_at_k": hits / k, "r_at_k": hits / k, "ap": sum(precisions) / k}
    for level, name in enumerate(LEVELS):
        of_level = {i for i, lv in planted.items() if lv == level}
        out[f"r@k {name}"] = len(of_level & set(top)) / max(1, len(of_level))
    if threshold is not None:
        flagged = [item for item, score in ranked if score >= threshold]
        true = sum(item in planted for item in flagged)
        out["flagged"] = len(flagged)
        out["flagged_precision"] = true / max(1, len(flagged))
        out["flagged_recall"] = true / k
        independent = [score for item, score in ranked if item not in planted]
        out["top_independent"] = max(independent, default=0.0)
    return out


def speed(count: int, jobs: int, seed: int) -> dict[str, float]:
    """run_similarity on `count` submissions in a child process: wall time and peak memory."""
    with tempfile.TemporaryDirectory() as tmp:
        people, _ = make_class(count - count // 10, count // 10, seed)
        write_class(people, Path(tmp) / "class")
        code = (
            "import json, resource, sys, time\n"
            "from pathlib import Path\n"
            "from autograder.config import load_kit\n"
            "from autograder.integrity.corpus import read_submissions\n"
            "from autograder.output.similarity_files import run_similarity\n"
            f"kit = load_kit(Path({str(ROOT)!r})); a = kit.assignment('nn_module')\n"
            "start = time.monotonic()\n"
            f"subs = read_submissions(Path({tmp!r}) / 'class', a)\n"
            f"found = run_similarity(a, subs, Path({tmp!r}) / 'out', jobs={jobs})\n"
            "seconds = time.monotonic() - start\n"
            "peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
            " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "print(json.dumps({'seconds': seconds, 'peak_mib': peak / 1024, 'pairs': len(found.pairs),"
            " 'submissions': len(subs)}))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=150)
    parser.add_argument("--copiers", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--speed", type=int, default=500, help="submissions of the speed line (0: none)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-copydetect", action="store_true")
    parser.add_argument("--only", default="", help="measure only the methods whose name starts so")
    args = parser.parse_args()
    assignment = load_kit(ROOT).assignment("nn_module")
    files = {t.file: t.id for t in assignment.tasks}
    people, planted_list = make_class(args.students, args.copiers, args.seed)
    planted = {(frozenset((p.copier, p.source)), files[p.file]): p.level for p in planted_list}
    docs = documents(people, files)
    boiler = boilerplate(assignment)
    print(
        f"class: {args.students} independent students + {args.copiers} copiers (seed {args.seed}), "
        f"{len(docs)} files; planted files per disguise level: "
        + ", ".join(f"{n} {sum(v == i for v in planted.values())}" for i, n in enumerate(LEVELS))
    )
    methods: dict[str, Callable[[list[Document], dict[str, list[str]]], Ranked]] = {
        "syntax (default)": rank_kit("syntax"),
        "tokens": rank_kit("tokens"),
        "both": rank_kit("both"),
    }
    if not args.no_copydetect:
        try:
            import copydetect  # noqa: F401

            methods["copydetect 0.5.0"] = rank_copydetect  # its defaults: k-grams of 25 tokens
            methods["copydetect k=10"] = functools.partial(rank_copydetect, noise=10)  # tuned for short files
        except ImportError:
            print("copydetect: not installed (pip install copydetect==0.5.0 to compare it too)")
    methods = {name: rank for name, rank in methods.items() if name.startswith(args.only)}
    planted_pairs = {pair for pair, _ in planted}
    results = {}
    for name, rank in methods.items():
        started = time.monotonic()
        by_file, by_pair = rank(docs, boiler)
        kit = not name.startswith("copydetect")
        results[name] = (
            quality(by_file, planted, None),
            pair_quality(by_pair, planted_pairs, DEFAULT_THRESHOLD if kit else None),
            time.monotonic() - started,
        )
    print(f"\nper file: k = {len(planted)} planted (pair, file) items among every pair of files of a task")
    print(
        f"{'method':<18}{'P@k':>6}{'R@k':>6}{'AP':>6}   recall@k by disguise: "
        + " ".join(f"{n[:7]:>8}" for n in LEVELS)
        + f"{'time':>8}"
    )
    for name, (q, _, seconds) in results.items():
        levels = " ".join(f"{q[f'r@k {n}']:>8.2f}" for n in LEVELS)
        print(
            f"{name:<18}{q['p_at_k']:>6.2f}{q['r_at_k']:>6.2f}{q['ap']:>6.2f}"
            f"   {' ' * 21}{levels}{seconds:>7.1f}s"
        )
    print(
        f"\nper pair of students (evidence of all their files): k = {len(planted_pairs)} planted pairs; "
        f"the report flags score >= {DEFAULT_THRESHOLD}"
    )
    print(f"{'method':<18}{'P@k':>6}{'R@k':>6}{'AP':>6}   flagged (precision, recall), top independent pair")
    for name, (_, q, _) in results.items():
        flagged = (
            (
                f"{int(q['flagged'])} ({q['flagged_precision']:.2f}, {q['flagged_recall']:.2f}), "
                f"{q['top_independent']:.2f}"
            )
            if "flagged" in q
            else "-"
        )
        print(f"{name:<18}{q['p_at_k']:>6.2f}{q['r_at_k']:>6.2f}{q['ap']:>6.2f}   {flagged}")
    if args.speed:
        s = speed(args.speed, args.jobs, args.seed)
        print(
            f"speed: {int(s['submissions'])} submissions of 7 files, --jobs {args.jobs}: "
            f"{s['seconds']:.1f} s end to end (goal 60 s), peak memory {s['peak_mib']:.0f} MiB, "
            f"{int(s['pairs'])} rows above the floor"
        )


if __name__ == "__main__":
    main()
