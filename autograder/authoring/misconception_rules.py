"""The static rules of an assignment's catalogues that the kit's tests hold it to, for `doctor` first.

`graders/misconceptions.toml` (tests/test_catalogue.py grades each entry; these rules need no
grading): at least 3 `[[wrong]]` entries and 1 `correct/<variant>/` per task (more where `[minimum]`
says), every entry well formed (its task, file, edits that apply once to the reference, feedback
keywords, `fails` and `must_not_fail` naming checks of its task), every task's `[required]`
keywords covered. And for each declared language other than English (tests/output/test_pages.py):
a title for the assignment, every task and every check, and no English left in the messages and
titles but code and the course's terms (latin_scan). Each problem names the file, the rule and the fix.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Iterator
from typing import Any

from autograder.authoring.catalogue_forms import check_ids, complete_wrong, load_contract
from autograder.authoring.latin_scan import latin_words
from autograder.catalogues import read_catalogue
from autograder.config import Assignment

WRONG_PER_TASK = 3
CORRECT_PER_TASK = 1
ENTRY_KEYS = frozenset({"id", "task", "file", "replace", "feedback", "why", "fails", "must_not_fail"})
WRITTEN = frozenset({"id", "replace", "feedback", "why"})  # the rest derive (catalogue_forms.py)
SCANNED = ("bn",)  # languages whose texts latin_scan reads (Latin words left in them are English)


def _entry_problems(entry: dict[str, Any], assignment: Assignment, where: str) -> Iterator[str]:
    name = f"{where}: [[wrong]] {entry.get('id', '?')!r}"
    if set(entry) != ENTRY_KEYS:
        if "task" not in entry and WRITTEN <= set(entry) <= ENTRY_KEYS:
            yield (f"{name}: its edit does not apply to exactly one task's reference, so its task cannot "
                   "be told: say `task = \"...\"`, or fix the edit")
            return
        yield (f"{name} has the fields {sorted(entry)}; an entry has {sorted(WRITTEN)}, and "
               f"{sorted(ENTRY_KEYS - WRITTEN)} where they cannot be derived (docs/authors/authoring.md, "
               "\"The two catalogues\")")
        return
    files = {task.id: task.file for task in assignment.tasks}
    if entry["task"] not in files:
        yield f"{name}: task {entry['task']!r} is not one of grading.toml's {sorted(files)}"
        return
    if entry["file"] != files[entry["task"]]:
        yield f"{name}: file {entry['file']!r} is not its task's file {files[entry['task']]!r}"
        return
    pairs = entry["replace"]
    if not pairs or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
                            for p in pairs):
        yield f"{name}: replace must be a list of [old, new] text pairs"
        return
    reference = assignment.solutions / entry["file"]
    text = reference.read_text(encoding="utf-8") if reference.is_file() else ""
    for old, new in pairs:
        if text.count(old) != 1:
            yield (f"{name}: {old!r} occurs {text.count(old)} times in solutions/{assignment.id}/"
                   f"{entry['file']}, it must occur exactly once: the reference changed, update the edit")
            return
        text = text.replace(old, new)
    if not entry["feedback"] or not all(isinstance(k, str) and k for k in entry["feedback"]):
        yield f"{name}: feedback must list the words its feedback holds in every language"
    if not isinstance(entry["why"], str) or not entry["why"].strip():
        yield f"{name}: why must say what the mistake is"
    fails, spared = entry["fails"], entry["must_not_fail"]
    if not isinstance(fails, list) or not fails or not isinstance(spared, list):
        yield f"{name}: fails (at least one check id) and must_not_fail must be lists of check ids"
        return
    if set(fails) & set(spared):
        yield f"{name}: {sorted(set(fails) & set(spared))} are in both fails and must_not_fail"
    unknown = sorted(set(map(str, fails + spared)) - check_ids(assignment.graders, entry["task"]))
    if unknown:
        yield (f"{name}: {unknown} are not checks of task {entry['task']!r} (a check id is "
               f"<task>.<function name without test_>)")


def stale_placeholders(assignment: Assignment, wrong: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scaffold's placeholder entries left in the catalogue of a task whose reference was rewritten
    (one of them no longer applies): one problem a task says so, not one per stale edit."""
    from autograder.authoring.scaffold import placeholder_catalogue

    placeholders = placeholder_catalogue(assignment.id, [task.id for task in assignment.tasks])
    stale = set()
    for entry in wrong:
        if entry not in placeholders:
            continue
        reference = assignment.solutions / str(entry["file"])
        text = reference.read_text(encoding="utf-8") if reference.is_file() else ""
        if any(text.count(old) != 1 for old, _ in entry["replace"]):
            stale.add(entry["task"])
    return [entry for entry in wrong if entry in placeholders and entry["task"] in stale]


def misconception_problems(assignment: Assignment) -> Iterator[str]:
    """Every broken rule of `graders/misconceptions.toml` and `graders/correct/` (exam extensions:
    none, their content's own catalogue is checked)."""
    if assignment.content not in ("", assignment.id):
        return
    path = assignment.graders / "misconceptions.toml"
    where = f"solutions/{assignment.id}/graders/misconceptions.toml"
    if not path.is_file():
        yield (f"{where}: missing: the kit's tests need at least {WRONG_PER_TASK} wrong edits of the "
               "reference per task (`autograder new` writes one to start from)")
        return
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        yield f"{where}: not valid TOML: {exc}"
        return
    wrong = [e for e in data.get("wrong", []) if isinstance(e, dict)]
    ids = Counter(e.get("id") for e in wrong)
    for twice in sorted(str(i) for i, n in ids.items() if n > 1):
        yield f"{where}: the id {twice!r} is used by {ids[twice]} entries: give each its own"
    stale = stale_placeholders(assignment, wrong)
    for task in sorted({str(entry["task"]) for entry in stale}):
        yield (f"{where}: task {task!r}: the scaffold's placeholder catalogue is still here: write your own "
               "mistakes (edits of the reference you wrote: docs/authors/authoring.md, step 4)")
    complete = complete_wrong(assignment, wrong, load_contract(assignment))
    for raw, entry in zip(wrong, complete, strict=True):
        if raw not in stale:
            yield from _entry_problems(entry if WRITTEN <= set(raw) <= ENTRY_KEYS else raw, assignment, where)
    wrong = complete
    tasks = [task.id for task in assignment.tasks]
    minimum = data.get("minimum", {})
    if not isinstance(minimum, dict) or set(minimum) - {"wrong", "correct"} or \
            not all(isinstance(v, int) and v >= 0 for v in minimum.values()):
        yield f"{where}: [minimum] holds only wrong = N and correct = N (whole numbers, 0 or more)"
        minimum = {}
    per_task = Counter(e.get("task") for e in wrong)
    for task in tasks:
        if per_task[task] < WRONG_PER_TASK:
            yield (f"{where}: task {task!r} has {per_task[task]} [[wrong]] entries, the kit's tests want "
                   f"at least {WRONG_PER_TASK}: add the lesson's common mistakes as edits of the reference")
    if isinstance(minimum.get("wrong"), int) and len(wrong) < minimum["wrong"]:
        yield f"{where}: {len(wrong)} [[wrong]] entries, its [minimum] says at least {minimum['wrong']}"
    correct = assignment.graders / "correct"
    variants = [p for p in correct.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))] \
        if correct.is_dir() else []
    replaced = Counter(src.stem for v in variants for src in v.glob("*.py"))
    for task in tasks:
        if replaced[task] < CORRECT_PER_TASK:
            yield (f"solutions/{assignment.id}/graders/correct/: no variant replaces {task}.py: add a "
                   f"correct solution in another style, e.g. correct/{task}_other/{task}.py")
    if isinstance(minimum.get("correct"), int) and len(variants) < minimum["correct"]:
        yield f"{where}: {len(variants)} correct variants, its [minimum] says at least {minimum['correct']}"
    required = data.get("required", {})  # optional: the lesson's agreed mistakes, where it names some
    for task in sorted(set(required) - set(tasks)):
        yield f"{where}: [required] names {task!r}, which is not a task of grading.toml"
    covered = {(e.get("task"), str(k).lower()) for e in wrong for k in e.get("feedback", [])}
    for task, keywords in required.items():
        for keyword in keywords if isinstance(keywords, list) else []:
            if (task, str(keyword).lower()) not in covered:
                yield (f"{where}: [required] {task} names {keyword!r}, which no entry of task {task!r} "
                       "lists in its feedback: add the entry for that mistake")


def language_problems(assignment: Assignment) -> Iterator[str]:
    """Per declared language besides English: titles for the assignment, each task and each check, and
    (for a language latin_scan reads) no English word left in a message or title but code and terms."""
    if assignment.content not in ("", assignment.id):
        return
    for lang in assignment.languages:
        if lang == "en":
            continue
        path = assignment.graders / "messages" / f"{lang}.toml"
        if not path.is_file():
            continue  # catalogue_rules says so
        where = f"solutions/{assignment.id}/graders/messages/{lang}.toml"
        messages = read_catalogue(path)
        titles = messages.get("titles", {})
        wanted = [assignment.id, *(t.id for t in assignment.tasks)]
        wanted += sorted(c for t in assignment.tasks for c in check_ids(assignment.graders, t.id))
        missing = [name for name in wanted if name not in titles]
        if missing:
            yield (f"{where}: [titles] has no {lang} title for {missing}: the pages would show the "
                   "English docstring there")
        if lang not in SCANNED:
            continue
        for key, entry in messages.items():
            for field, text in entry.items():
                words = latin_words(text)
                if words:
                    yield (f"{where}: {key}.{field} has English words {words}: "
                           "translate them, keep code in `backticks` (or add a course term to "
                           "autograder/messages/terms.txt)")
