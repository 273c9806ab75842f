"""English left on a Bangla page or in a Bangla check output: the Latin-script words that are neither
code nor one of the course's English technical terms (messages/terms.txt).

The course is taught in Bangla with its technical terms in English (`tensor`, `shape`, `layer`,
`state_dict`...), so a Latin word is fine when it is code (a code span, a `<code>`/`<pre>` element,
a dotted or called name, snake_case, CamelCase, a single letter, anything with a digit) or a term
of the list; any other Latin word is an untranslated string. Used on the engine's pages and
outputs, and on an assignment's catalogues and check titles.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

TERMS_FILE = Path(__file__).resolve().parents[1] / "messages" / "terms.txt"
_BLOCKS = re.compile(r"<(style|script|code|pre|svg)\b[^>]*>.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")


@lru_cache(maxsize=4)
def course_terms(path: Path = TERMS_FILE) -> frozenset[str]:
    """The English technical terms the course keeps in English (one a line, `#` comments)."""
    words = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        word = line.split("#", 1)[0].strip()
        if word:
            words.add(word.casefold())
    return frozenset(words)


def _is_code(token: str) -> bool:
    """A token that is code as written: digits, punctuation of names and calls, case inside a word."""
    core = token.strip(",;:!?\"'’“”।—–()[]")
    if re.search(r"[0-9_.()\[\]=/*<>@{}|\\+^%#&$~]", core):
        return True
    if re.search(r"[a-z][A-Z]|[A-Z]{2}", core):  # CamelCase, ALL-CAPS (ReLU, NumPy, GPU, MLP)
        return True
    return len(core) <= 1  # x, N, p


def plain_text(page: str) -> str:
    """The words a reader sees on an HTML page, code elements left out."""
    return html.unescape(_TAG.sub(" ", _BLOCKS.sub(" ", page)))


def latin_words(text: str, terms: Iterable[str] | None = None) -> list[str]:
    """The Latin-script words of `text` (plain text; see plain_text for a page) that are neither code
    nor course terms, in the order they appear (each once)."""
    allowed = course_terms() if terms is None else frozenset(t.casefold() for t in terms)
    found: dict[str, None] = {}
    for token in _PLACEHOLDER.sub(" ", _CODE_SPAN.sub(" ", text)).split():
        if _is_code(token):
            continue
        # A Bangla suffix joined by a hyphen ("model-এর") or a Latin compound ("eval-mode").
        for part in re.split(r"[-‑]", token):
            for word in _WORD.findall(part):
                word = re.sub(r"['’]s$", "", word)
                if len(word) > 1 and word.casefold() not in allowed:
                    found.setdefault(word)
    return list(found)


def page_latin_words(page: str, terms: Iterable[str] | None = None) -> list[str]:
    """latin_words of what an HTML page shows (its code elements, styles and scripts left out)."""
    return latin_words(plain_text(page), terms)
