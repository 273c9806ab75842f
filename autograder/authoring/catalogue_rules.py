"""The rules every feedback catalogue follows, in every language an assignment declares.

For each language beside English there is a `<lang>.toml` with exactly the keys of `en.toml`; each
message has the fields observed, expected and idea, the same in every language, and each field the
same `{placeholders}`. A translated text is not the English one (unless it is only placeholders and
code, like "{call}: {raised}") and is written in the language's script. Technical terms
(`state_dict`, `zero_grad()`, `1/(1-p)`, `(N,)`, ...) stay in English as the course writes them, so
the translation contains every one the English text has.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from string import Formatter

from autograder.catalogues import FIELDS, LABEL_TABLES, placeholders, read_catalogue

SCRIPTS = {"bn": re.compile(r"[\u0980-\u09FF]")}  # a translated text uses its language's letters


def technical_terms(text: str) -> set[str]:
    """Code-like tokens of an English text: `code spans`, calls, dotted names, snake_case, shapes,
    formulas and CamelCase names (zero_grad(), nn.ModuleList, 1/(1-p), (N,), ReLU, ValueError)."""
    terms = set(re.findall(r"`[^`]+`", text))
    for raw in re.sub(r"`[^`]+`", " ", text).split():
        token = re.sub(r"'s$", "", raw.strip(",;:!?\"'"))
        if not token.endswith("..."):
            token = token.rstrip(".")
        if token.count("(") < token.count(")"):
            token = token.rstrip(")")
        if token.count("(") > token.count(")"):
            token = token.lstrip("(")
            if token.count("(") > token.count(")"):  # "nn.ModuleList(one nn.Linear ...)": the name only
                token = token.split("(")[0]
        token = token.strip(",;:!?\"'")
        if re.fullmatch(r"\(\w+\)", token) or token in {"e.g", "i.e"} or "{" in token:
            continue  # a word in parentheses, an abbreviation, a placeholder
        code_like = re.search(r"[_().\[\]=@*<>/]", token) or re.search(r"[a-z][A-Z]|[A-Z]{2}", token)
        if code_like and re.search(r"[A-Za-z0-9]", token):
            terms.add(token)
    return terms


def is_pure_code(text: str) -> bool:
    """Only placeholders, punctuation and code spans: the same in every language ("{call}: {raised}")."""
    literal = "".join(part for part, _, _, _ in Formatter().parse(re.sub(r"`[^`]+`", "", text)))
    return not re.search(r"[A-Za-z]", literal)


def translation_problems(english: str, translated: str, lang: str) -> list[str]:
    """What is wrong with one translated text (empty: nothing)."""
    if not translated.strip():
        return ["is empty"]
    problems = []
    if placeholders(translated) != placeholders(english):
        problems.append(f"has placeholders {sorted(n for n, _, _ in placeholders(translated))}, "
                        f"en has {sorted(n for n, _, _ in placeholders(english))}")
    if not is_pure_code(english):
        if translated.strip() == english.strip():
            problems.append("is the English text, untranslated")
        elif lang in SCRIPTS and not SCRIPTS[lang].search(translated):
            problems.append(f"has no {lang} script in it")
    lost = sorted(t for t in technical_terms(english) if t not in translated)
    if lost:
        problems.append(f"lacks the technical terms {lost} (keep them in English)")
    return problems


def catalogue_problems(folder: Path, languages: tuple[str, ...]) -> Iterator[str]:
    """Every broken rule of the catalogue in `folder` (en.toml and one file per other language)."""
    english_path = folder / "en.toml"
    if not english_path.is_file():
        yield f"{english_path}: missing (every assignment's feedback starts in English)"
        return
    english = read_catalogue(english_path)
    for key, entry in english.items():
        if key.split(".")[0] not in LABEL_TABLES and set(entry) != set(FIELDS):
            yield f"{english_path}: [{key}] has fields {sorted(entry)}, want {list(FIELDS)}"
    for lang in languages:
        if lang == "en":
            continue
        path = folder / f"{lang}.toml"
        if not path.is_file():
            yield f"{path}: missing, but grading.toml declares {lang!r}: translate en.toml into it"
            continue
        other = read_catalogue(path)
        for key in sorted(english.keys() - other.keys()):
            yield f"{path}: [{key}] is not translated"
        for key in sorted(other.keys() - english.keys()):
            yield f"{path}: [{key}] is not in en.toml"
        for key in sorted(english.keys() & other.keys()):
            if set(other[key]) != set(english[key]):
                yield f"{path}: [{key}] has fields {sorted(other[key])}, en.toml {sorted(english[key])}"
            for field in sorted(english[key].keys() & other[key].keys()):
                for problem in translation_problems(english[key][field], other[key][field], lang):
                    yield f"{path}: {key}.{field} {problem}"
