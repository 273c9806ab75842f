"""Similarity finds disguised copies and leaves independent work alone; its files are safe to open.

The class: the reference and every hand-written correct variant (solutions/nn_module/graders/correct/)
as students of their own, students generated in varied styles (benchmarks/similarity_class.py), and
two copiers, each copying three files of one classmate under disguises (renamed, reordered,
restructured; verbatim, padded with dead code). Both copiers are flagged; no independent pair is.
"""

from __future__ import annotations

import csv
import random
import sys

import numpy as np
import pytest
from conftest import ROOT, STUBS

from autograder.integrity.corpus import boilerplate, read_submissions
from autograder.integrity.similarity import (
    ARCHIVE,
    CLASS,
    DEFAULT_THRESHOLD,
    FILE_MOST,
    PUBLIC,
    Document,
    Source,
    compare,
    file_share,
    merge,
    score_of,
)
from autograder.integrity.syntax import syntax_prints
from autograder.integrity.tokens import normalized_tokens
from autograder.output.similarity_files import CSV_HEADER, FINDINGS, load_similarity, run_similarity

sys.path.insert(0, str(ROOT / "benchmarks"))
import similarity_class as made

# copier: (source, {file: disguise level}); short files everybody writes alike are no evidence alone
COPIES = {
    "c1": ("h3", {"containers.py": 1, "dropout.py": 2, "numpy_forward.py": 3}),
    "c2": ("h7", {"tinynet.py": 0, "delivery.py": 4, "counting.py": 4}),
}


@pytest.fixture(scope="module")
def made_class() -> tuple[dict[str, dict[str, str]], dict[str, tuple[str, tuple[str, ...]]]]:
    fixed = made.fixed_styles()
    people = {f"h{i}": made.independent_student(i, 0, fixed) for i in range(30)}
    rng = random.Random(0)
    copied = {}
    for copier, (source, levels) in COPIES.items():
        own = made.independent_student(100 + len(copied), 0, None)
        for name, level in levels.items():
            own[name] = made.disguise(people[source][name], level, rng)
        people[copier] = own
        copied[copier] = (source, tuple(levels))
    return people, copied


@pytest.fixture(scope="module")
def similarity_out(made_class, kit, tmp_path_factory):
    people, _ = made_class
    folder = made.write_class(people, tmp_path_factory.mktemp("class"))
    out = tmp_path_factory.mktemp("out")
    assignment = kit.assignment("nn_module")
    return run_similarity(assignment, read_submissions(folder, assignment), out, jobs=1), out


def test_hand_written_styles_are_in_the_class(made_class):
    people, _ = made_class
    fixed = made.fixed_styles()
    assert len(fixed["tinynet.py"]) >= 4  # the reference and three correct variants
    assert people["h1"]["tinynet.py"] == fixed["tinynet.py"][1]
    for files in people.values():
        for name, text in files.items():
            compile(text, name, "exec")  # every made-up file is Python


def test_planted_pairs_are_flagged_and_independent_ones_are_not(similarity_out, made_class):
    found, _ = similarity_out
    _, copied = made_class
    flagged = {(p.student_a, p.student_b) for p in found.flagged}
    planted = {tuple(sorted((copier, source))) for copier, (source, _) in copied.items()}
    assert planted <= {tuple(sorted(p)) for p in flagged}, found.students[:5]
    assert {tuple(sorted(p)) for p in flagged} == planted  # no independent pair reaches the threshold
    top = [tuple(sorted((p.student_a, p.student_b))) for p in found.students[:2]]
    assert set(top) == planted  # and the copies rank first


def test_each_copied_file_has_its_row_with_the_lines_that_match(similarity_out, made_class):
    found, out = similarity_out
    _, copied = made_class
    rows = list(csv.reader((out / "similarity.csv").open(encoding="utf-8")))
    assert tuple(rows[0]) == CSV_HEADER
    scores = [float(r[3]) for r in rows[1:]]
    assert scores == sorted(scores, reverse=True) and min(scores) >= found.floor
    by_pair = {(r[0], r[1], r[2]): r for r in rows[1:]} | {(r[1], r[0], r[2]): r for r in rows[1:]}
    tasks = {t.file: t.id for t in made_class_tasks()}
    for copier, (source, files) in copied.items():
        present = [f for f in files if (copier, source, tasks[f]) in by_pair]
        assert len(present) >= 2, (copier, files)
        for name in present:
            row = by_pair[(copier, source, tasks[name])]
            assert row[4] and row[5]  # matched lines on both sides, as 3-9;14
            for part in (row[4] + ";" + row[5]).split(";"):
                first, _, last = part.partition("-")
                assert int(first) <= int(last or first)


def made_class_tasks():
    from autograder.config import load_kit

    return load_kit(ROOT).assignment("nn_module").tasks


def test_the_stub_and_what_its_docstrings_spell_are_no_evidence(kit):
    assignment = kit.assignment("nn_module")
    stub = (STUBS / "tinynet.py").read_text(encoding="utf-8")
    dictated = stub.replace(
        'raise NotImplementedError("tinynet: write TinyNet.__init__")',
        "self.fc1 = nn.Linear(in_features, hidden)\n        self.fc2 = nn.Linear(hidden, out_features)",
    )  # what the docstring says
    docs = [
        Document(Source(CLASS, s), "tinynet", "tinynet.py", text)
        for s, text in [("ada", stub), ("bob", stub), ("cy", dictated), ("dee", dictated)]
    ]
    found = compare(docs, boilerplate(assignment), floor=0.0)
    assert all(m.score == 0 for m in found.matches), [
        (m.a.source.name, m.b.source.name, m.score) for m in found.matches
    ]
    assert all(p.score == 0 for p in found.pairs)


def test_disguises_that_keep_the_structure_keep_the_fingerprints():
    text = (made.SOLUTIONS / "counting.py").read_text(encoding="utf-8")
    rng = random.Random(1)
    original = {p.hash for p in syntax_prints(text) or []}
    renamed = {p.hash for p in syntax_prints(made.disguise(text, 1, rng)) or []}
    assert original == renamed  # names, comments and layout are abstracted
    loop = "def f(xs):\n    out = []\n    for x in xs:\n        if x > 0:\n            out.append(x * 2)\n"
    loop += "    return out\n"
    comprehension = "def g(values):\n    res = [v * 2 for v in values if v > 0]\n    return res\n"
    assert {p.hash for p in syntax_prints(loop) or []} & {p.hash for p in syntax_prints(comprehension) or []}
    tokens = [t.text for t in normalized_tokens("import numpy as np\nx = np.zeros(3)  # hi\n")]
    assert tokens[-9:] == ["V", "=", "numpy", ".", "zeros", "(", "N", ")", ";"]  # np is numpy, 3 is N


def _prints(text: str) -> set[int]:
    found = syntax_prints(text)
    assert found is not None, text
    return {p.hash for p in found}


PLAIN = (
    "import torch\n\n"
    "def total(xs, w):\n"
    "    acc = 0\n"
    "    for x in xs:\n"
    "        acc += x * w\n"
    "    return torch.tensor(acc)\n"
)


@pytest.mark.parametrize(
    "disguised",
    [
        # a summing loop spelled with `acc = acc + ...`, or as sum() of a generator
        PLAIN.replace("acc += x * w", "acc = acc + x * w"),
        "import torch\n\ndef total(xs, w):\n    acc = sum(x * w for x in xs)\n    return torch.tensor(acc)\n",
        # padding: a local stored and never read, a false flag and what it guards, a helper nobody calls
        PLAIN.replace("    acc = 0\n", "    unused = 0\n    acc = 0\n    steps = []\n"),
        "DEBUG = False\n" + PLAIN.replace("    return", "    if DEBUG:\n        print('called')\n    return"),
        PLAIN + "\ndef _describe(obj):\n    text = str(obj)\n    return text.strip()[:80]\n",
    ],
)
def test_padding_and_respelled_loops_leave_the_code_as_it_was(disguised):
    assert _prints(disguised) == _prints(PLAIN.replace("acc += x * w", "acc = acc + x * w"))
    assert _prints(PLAIN) == _prints(PLAIN.replace("acc += x * w", "acc = acc + x * w"))  # += is + then =


@pytest.mark.parametrize(
    "alive",
    [
        PLAIN.replace("    acc = 0\n", "    scale = 2\n    acc = 0\n").replace("x * w", "x * w * scale"),
        "DEBUG = False\nDEBUG = True\n"
        + PLAIN.replace("    return", "    if DEBUG:\n        print(1)\n    return"),
        "DEBUG = False\n"
        + PLAIN.replace("    return", "    if DEBUG:\n        print(1)\n    return")
        + "x = DEBUG\n",
        PLAIN + "\ndef _describe(obj):\n    return str(obj)\n\nprint(_describe(1))\n",
        PLAIN + "\ndef _describe(obj):\n    return str(obj)\n\n__all__ = ['_describe']\n",
        PLAIN.replace("    acc = 0\n", "    acc = 0\n    log = []\n").replace(
            "acc += x * w", "acc += x * w\n        log.append(acc)"
        ),
    ],
)
def test_code_that_is_read_or_changed_is_not_taken_for_padding(alive):
    assert _prints(alive) != _prints(PLAIN)


def test_one_file_alike_is_not_enough_for_a_pair_but_several_are():
    # 100 nats in one file (a score of 0.71 for that file) does not flag the pair; the same spread
    # over three files (0.45 each) does; one file flags alone only with overwhelming evidence
    assert score_of(100.0) > 0.7 and score_of(file_share(np.array(100.0))) < DEFAULT_THRESHOLD
    assert score_of(3 * file_share(np.array(33.0))) > DEFAULT_THRESHOLD
    assert score_of(file_share(np.array(150.0))) > DEFAULT_THRESHOLD
    assert file_share(np.array(1e9)) == pytest.approx(FILE_MOST)
    assert file_share(np.array(-30.0)) == 0  # a file written alone takes nothing away
    assert 3.8 < file_share(np.array(4.0)) < 4.0  # little evidence passes nearly whole


def test_a_file_that_does_not_parse_is_still_compared(kit):
    broken = "def count_parameters(model, trainable_only=False):\n"
    broken += "    total = sum(p.numel() for p in model.parameters(\n"
    docs = [
        Document(Source(CLASS, s), "counting", "counting.py", broken + f"# {s}\n") for s in ("ada", "bob")
    ]
    docs.append(Document(Source(CLASS, "cy"), "counting", "counting.py", "x = 1\n"))
    found = compare(docs, {}, floor=0.0)
    assert any({m.a.source.name, m.b.source.name} == {"ada", "bob"} and m.score > 0 for m in found.matches)


def test_merge_joins_touching_ranges():
    assert merge([(5, 7), (1, 2), (3, 3), (9, 9)]) == ((1, 3), (5, 7), (9, 9))


def test_earlier_terms_and_public_solutions_say_which_side_matched(made_class, kit, tmp_path):
    people, _ = made_class
    assignment = kit.assignment("nn_module")
    earlier = made.write_class({k: people[k] for k in ("h3", "h5", "h9", "h12")}, tmp_path / "term-2024")
    earlier_out = tmp_path / "out-2024"
    run_similarity(assignment, read_submissions(earlier, assignment), earlier_out, jobs=1)
    public = tmp_path / "public" / "blog-solution"
    public.mkdir(parents=True)
    for name, text in people["h7"].items():
        (public / name).write_text(text, encoding="utf-8")
    now = {k: people[k] for k in ("c1", "c2", "h20", "h21", "h22", "h23", "h24", "h25")}
    found = run_similarity(
        assignment,
        read_submissions(made.write_class(now, tmp_path / "term-2025"), assignment),
        tmp_path / "out-2025",
        archives=[earlier_out],
        public=[public],
        jobs=1,
    )
    sides = {(p.student_a, p.student_b): p.side for p in found.flagged}
    assert sides.get(("c1", "archive:out-2024/h3")) == ARCHIVE, found.students[:4]
    assert sides.get(("c2", "public:blog-solution")) == PUBLIC, found.students[:4]
    assert found.compared == {"class": 8, "archive": 4, "public": 1}
    assert all(p.student_a in now for p in found.students)  # this class's student is always first


def test_pair_pages_escape_hostile_code_and_run_no_script(kit, tmp_path):
    assignment = kit.assignment("nn_module")
    hostile = (made.SOLUTIONS / "dropout.py").read_text(encoding="utf-8") + (
        '\nNOTE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"\n'
        "def _helper_with_a_long_rare_body(a, b):\n"
        "    return [(a ** i) % (b + 7) for i in range(a) if i % 3]\n"
    )
    for s in ("mallory", "trudy"):
        (tmp_path / "class" / s).mkdir(parents=True)
        (tmp_path / "class" / s / "dropout.py").write_text(hostile, encoding="utf-8")
    (tmp_path / "class" / "<b>eve").mkdir()
    (tmp_path / "class" / "<b>eve" / "dropout.py").write_text("import numpy as np\n", encoding="utf-8")
    found = run_similarity(
        assignment, read_submissions(tmp_path / "class", assignment), tmp_path / "out", floor=0.0, jobs=1
    )
    pages = [tmp_path / "out" / r.page for r in found.pairs if r.page]
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html and "onerror=alert" not in html.replace("onerror=alert(2)&gt;", "")
        assert "&lt;/script&gt;&lt;script&gt;alert(1)" in html or "&lt;b&gt;eve" in html
        assert "Content-Security-Policy" in html and "default-src 'none'" in html
        assert page.parent == tmp_path / "out" / "similarity"  # a student's name cannot move a page
    assert load_similarity(tmp_path / "out") == found
    assert (tmp_path / "out" / FINDINGS).is_file()


def test_a_second_run_on_the_same_class_reuses_the_findings(similarity_out, made_class, kit, tmp_path):
    found, out = similarity_out
    stamp = (out / "similarity.csv").stat().st_mtime_ns
    people, _ = made_class
    again = run_similarity(
        kit.assignment("nn_module"),
        read_submissions(made.write_class(people, tmp_path / "class"), kit.assignment("nn_module")),
        out,
        jobs=1,
    )
    assert again == found and (out / "similarity.csv").stat().st_mtime_ns == stamp


def test_unknown_method_and_missing_archive_are_clear(kit, tmp_path):
    from autograder.integrity.corpus import CorpusError, read_other

    with pytest.raises(ValueError, match="unknown similarity method"):
        compare([], method="nope")
    with pytest.raises(CorpusError, match="not found"):
        read_other(tmp_path / "nowhere", kit.assignment("nn_module"), ARCHIVE)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="holds none of the task files"):
        read_other(tmp_path / "empty", kit.assignment("nn_module"), PUBLIC)
