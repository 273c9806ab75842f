"""Which files of a class are alike beyond what independent work explains (host side; nothing runs).

Per task file, every document (a student's file, an earlier term's, a public solution) becomes a set
of fingerprints (`syntax`: canonical subtrees, the default; `tokens`: winnowed token k-grams;
`both`). The stub's and the given files' fingerprints, and those of the code the stub's docstrings
spell out, are boilerplate and removed. Short exercises converge, so sharing a fingerprint most of
the class has says nothing, and sharing one nobody else has says much: a pair's evidence is the
log-likelihood ratio of "one copied the other, under a disguise that keeps most fingerprints" to
"both wrote it on their own, as often as the class does" (`_surprise`), minus what the smaller file
has that the other lacks. Evidence adds up over a pair's files (`PairEvidence`), each file's
saturating at FILE_MOST (one file alike is also what converging looks like). A score from 0 to
1 shows it: `half` nats give 0.5 (benchmarks/similarity_quality.py measures where copies and
independent work fall).
"""

from __future__ import annotations

import math
import multiprocessing
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from autograder.integrity.prints import Print
from autograder.integrity.syntax import syntax_prints
from autograder.integrity.tokens import token_prints

# syntax is the default: on benchmarks/similarity_quality.py it ranks planted pairs of students best
# (pairs' precision at k 0.83; winnowed tokens 0.57, both 0.63, copydetect 0.5.0 0.17), since reordering,
# loops spelled as comprehensions and padding break token runs but leave most subtrees whole.
METHODS = ("syntax", "tokens", "both")
CLASS, ARCHIVE, PUBLIC = "class", "archive", "public"
DEFAULT_FLOOR = 0.25  # rows below are not written
DEFAULT_THRESHOLD = 0.6  # the report flags pairs of students from here (benchmarks/similarity_quality.py)
DEFAULT_HALF = 40.0  # nats of evidence that make a score of 0.5 (0.6, the threshold: 60 nats)
SURVIVES = 0.8  # the share of a copied file's fingerprints its disguise leaves
FILE_MOST = 80.0  # nats one file adds to its pair at most: alone it flags from 111 nats (80 ln 4) on
RARE = 0.1  # matching regions are drawn from fingerprints at most this share of the class holds
Span = tuple[int, int]


@dataclass(frozen=True)
class Source:
    """Whose a document is: a student of this class, of an earlier term (archive), or a public solution."""

    side: str
    name: str
    origin: str = ""  # the archive's or the public folder's name

    @property
    def label(self) -> str:
        if self.side == CLASS:
            return self.name
        return f"{self.side}:{self.origin}/{self.name}" if self.origin else f"{self.side}:{self.name}"


@dataclass(frozen=True)
class Document:
    source: Source
    task: str
    file: str
    text: str


@dataclass(frozen=True)
class Region:
    """One stretch of matching code: its lines in the first file, and where they are in the second."""

    a: Span
    b: tuple[Span, ...]


@dataclass(frozen=True)
class Match:
    """Two documents of one task whose score reached the floor."""

    a: Document
    b: Document
    score: float
    regions: tuple[Region, ...]

    @property
    def task(self) -> str:
        return self.a.task

    @property
    def lines_a(self) -> tuple[Span, ...]:
        return merge(r.a for r in self.regions)

    @property
    def lines_b(self) -> tuple[Span, ...]:
        return merge(s for r in self.regions for s in r.b)


@dataclass(frozen=True)
class PairEvidence:
    """Two students (or a student and an archive's or a public solution) over all their files."""

    a: Source
    b: Source
    evidence: float  # nats, summed over the task files where it is positive
    score: float
    tasks: tuple[str, ...]  # the files whose own score reached the floor


@dataclass(frozen=True)
class Comparison:
    matches: tuple[Match, ...]  # per task file, highest first
    pairs: tuple[PairEvidence, ...]  # per pair of sources, highest first


def merge(spans: Iterable[Span]) -> tuple[Span, ...]:
    """Line ranges joined where they touch or overlap, in order."""
    out: list[list[int]] = []
    for first, last in sorted(spans):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return tuple((a, b) for a, b in out)


def fingerprint(text: str, method: str = "syntax", boiler: frozenset[int] = frozenset()) -> list[Print]:
    """The document's fingerprints; a file that does not parse falls back to its tokens."""
    if method == "tokens":
        return token_prints(text)
    found = syntax_prints(text, boiler=boiler)
    if found is None:
        return token_prints(text)
    if method == "both":
        return found + token_prints(text)
    return found


def _prints_of(job: tuple[str, frozenset[int], list[str]]) -> list[list[Print]]:
    method, boiler, texts = job
    return [fingerprint(t, method, boiler) for t in texts]


def fingerprint_all(
    texts: Sequence[str], method: str, boiler: frozenset[int] = frozenset(), jobs: int = 1
) -> list[list[Print]]:
    """Every text's fingerprints, on `jobs` processes (spawned: the caller may hold threads)."""
    if jobs <= 1 or len(texts) < 64:
        return [fingerprint(t, method, boiler) for t in texts]
    size = max(16, len(texts) // (jobs * 4))
    chunks = [(method, boiler, list(texts[i : i + size])) for i in range(0, len(texts), size)]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        return [p for chunk in pool.map(_prints_of, chunks) for p in chunk]


def boilerplate_prints(texts: Sequence[str], method: str) -> frozenset[int]:
    """The fingerprints of the stub and the given files, and of their blocks hashed without the
    boilerplate they hold, to a fixed point (a function whose every line is the stub's is the stub's)."""
    found: frozenset[int] = frozenset()
    for _ in range(16):  # one round per level of nesting
        more = found | {p.hash for t in texts for p in fingerprint(t, method, found)}
        if more == found:
            break
        found = more
    return found


def _spans(prints: Iterable[Print], boiler: frozenset[int]) -> dict[int, list[Span]]:
    spans: dict[int, list[Span]] = defaultdict(list)
    for p in prints:
        if p.hash not in boiler:
            spans[p.hash].append((p.first, p.last))
    return spans


def compare(
    documents: Sequence[Document],
    boilerplate: Mapping[str, Sequence[str]] | None = None,
    *,
    method: str = "syntax",
    floor: float = DEFAULT_FLOOR,
    half: float = DEFAULT_HALF,
    jobs: int = 1,
) -> Comparison:
    """Pairs of documents of the same task (at least one of this class) scoring `floor` or more,
    and pairs of sources over all their files, highest first. `boilerplate`: task -> texts whose
    code is nobody's evidence (the stub, the given files)."""
    if method not in METHODS:
        raise ValueError(f"unknown similarity method {method!r} (one of {', '.join(METHODS)})")
    boilerplate = boilerplate or {}
    tasks = sorted({d.task for d in documents})
    boiler = {task: boilerplate_prints(boilerplate.get(task, ()), method) for task in tasks}
    by_task: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(documents):
        by_task[d.task].append(i)
    everything: dict[int, list[Print]] = {}
    for task in tasks:
        texts = [documents[i].text for i in by_task[task]]
        everything.update(zip(by_task[task], fingerprint_all(texts, method, boiler[task], jobs), strict=True))
    sources = sorted({d.source for d in documents}, key=lambda s: (s.side != CLASS, s.label))
    index = {source: i for i, source in enumerate(sources)}
    total = np.zeros((len(sources), len(sources)))
    matches: list[Match] = []
    for task in tasks:
        docs = [documents[i] for i in by_task[task]]
        spans = [_spans(everything[i], boiler[task]) for i in by_task[task]]
        found, evidence = _score_task(docs, spans, floor, half)
        matches += found
        rows = np.array([index[d.source] for d in docs])
        total[np.ix_(rows, rows)] += file_share(evidence)
    matches.sort(key=lambda m: (-m.score, m.task, m.a.source.label, m.b.source.label))
    files: dict[frozenset[Source], list[str]] = defaultdict(list)
    for m in matches:
        files[frozenset((m.a.source, m.b.source))].append(m.task)
    pair_scores = score_of(total, half)
    is_class = np.array([s.side == CLASS for s in sources])
    pairs = [
        PairEvidence(
            sources[int(i)],
            sources[int(j)],
            round(float(total[i, j]), 2),
            round(float(pair_scores[i, j]), 4),
            tuple(sorted(files.get(frozenset((sources[int(i)], sources[int(j)])), ()))),
        )
        for i, j in np.argwhere(np.triu(pair_scores >= floor, 1) & is_class[:, None])
    ]
    pairs.sort(key=lambda p: (-p.score, p.a.label, p.b.label))
    return Comparison(tuple(matches), tuple(pairs))


def _score_task(
    docs: list[Document], spans: list[dict[int, list[Span]]], floor: float, half: float
) -> tuple[list[Match], np.ndarray]:
    """The task's pairs scoring `floor` or more, and the evidence of every pair (n x n, nats)."""
    n = len(docs)
    if n < 2:
        return [], np.zeros((n, n))
    df = Counter(h for s in spans for h in s)
    shared = sorted(h for h, c in df.items() if c >= 2)
    column = {h: j for j, h in enumerate(shared)}
    presence = np.zeros((n, len(shared)), dtype=np.float32)
    for i, s in enumerate(spans):
        presence[i, [column[h] for h in s if h in column]] = 1.0
    evidence = (presence * _surprise(np.array([df[h] for h in shared], dtype=np.float64), n)) @ presence.T
    common = presence @ presence.T
    sizes = np.array([len(s) for s in spans], dtype=np.float32)
    missing = np.minimum.outer(sizes, sizes) - common  # of the smaller document, what the other lacks
    evidence = evidence + missing * math.log(1 - SURVIVES)
    np.fill_diagonal(evidence, 0.0)
    scores = score_of(evidence, half)
    is_class = np.array([d.source.side == CLASS for d in docs])
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    candidates = np.argwhere(upper & (scores >= floor) & (is_class[:, None] | is_class[None, :]))
    found = []
    rare = max(2, int(RARE * n))  # fingerprints shown as matching: held by at most this many
    for i, j in candidates:
        a, b = (int(i), int(j)) if is_class[i] else (int(j), int(i))  # this class's student first
        regions = _regions(spans[a], spans[b], {h for h in spans[a] if h in spans[b] and df[h] <= rare})
        if regions:
            found.append(Match(docs[a], docs[b], round(float(scores[i, j]), 4), regions))
    return found, evidence


def _surprise(df: np.ndarray, n: int) -> np.ndarray:
    """What sharing each fingerprint says for copying: log P(shared | copied) / P(shared | independent).

    A copied fingerprint survives the disguise with probability SURVIVES, or the copier writes it
    anyway; an independent student writes it as often as the rest of the class does (df of n,
    these two aside)."""
    often = np.maximum(df - 1.5, 0.5) / n
    return np.log1p(SURVIVES * (1 - often) / often).astype(np.float32)


def file_share(evidence: np.ndarray, most: float = FILE_MOST) -> np.ndarray:
    """What one file's evidence adds to its pair's: nothing when negative (a file written alone
    takes nothing away), and at most `most` nats however much it holds (saturating), so a pair is
    flagged for what several files show; one file alike is also what converging on a short task,
    or on the same tutorial, looks like."""
    share: np.ndarray = most * -np.expm1(-np.maximum(evidence, 0.0) / most)
    return share


def score_of(evidence: np.ndarray | float, half: float = DEFAULT_HALF) -> np.ndarray:
    """Evidence (a log-likelihood ratio, in nats) as a score from 0 to 1: `half` nats give 0.5."""
    positive = np.maximum(np.asarray(evidence, dtype=np.float64), 0.0)
    return positive / (positive + half)


def _regions(a: dict[int, list[Span]], b: dict[int, list[Span]], hashes: set[int]) -> tuple[Region, ...]:
    """The matching stretches of `a` (merged), each with the lines of `b` its fingerprints came from."""
    pieces = sorted((span, h) for h in hashes for span in a[h])
    regions: list[tuple[Span, set[int]]] = []
    for span, h in pieces:
        if regions and span[0] <= regions[-1][0][1] + 1:
            (first, last), held = regions[-1]
            regions[-1] = ((first, max(last, span[1])), held | {h})
        else:
            regions.append((span, {h}))
    return tuple(Region(span, merge(s for h in held for s in b[h])) for span, held in regions)
