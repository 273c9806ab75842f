"""Gradescope's test outputs: Markdown (`md`) where the feedback holds code, plain `text` otherwise.

Gradescope renders an output as `output_format` says (../shared/notes/lms.md §1.3: `text` shows it as
written, `md` renders Markdown). The feedback's code spans (`tinynet.py`, and the code words the
pages mark, grading/code_words.py) then show as code. Everything else is escaped, so that a student's
`*args`, `<b>` or `[link](...)` quoted in the feedback stays text, and every line is a paragraph of
its own (Markdown would join lines that follow each other).
"""

from __future__ import annotations

import re
from typing import Any

from autograder.grading.code_words import mark_code

_SPAN = re.compile(r"(`[^`\n]+`)")
# What Markdown reads anywhere in a line (emphasis, links, HTML, entities, tables, math...); any ASCII
# punctuation may be backslash-escaped in CommonMark, and is then only itself.
_MARKUP = re.compile(r"([\\`*_{}\[\]<>|~&$!#])")
_LINE_START = re.compile(r"^([-+=]|\d+[.)])")  # a list item, a heading underline: at a line's start


def _escaped(text: str, first: bool) -> str:
    text = _MARKUP.sub(r"\\\1", text)
    if first:
        text = _LINE_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], text)
    return text


def _line(line: str) -> str:
    """One line as Markdown: code spans kept, all else escaped, its indent kept (no code block)."""
    body = line.lstrip(" \t")
    indent = "\u00a0" * (len(line) - len(body))  # four spaces (or a tab) would start a code block
    pieces = _SPAN.split(body)
    return indent + "".join(piece if index % 2 else _escaped(piece, index == 0)
                            for index, piece in enumerate(pieces))


def output_markdown(text: str) -> str | None:
    """`text` as Markdown, when it holds code to show as code (None: leave it as text)."""
    marked = mark_code(text)
    if not _SPAN.search(marked):
        return None
    return "\n\n".join(_line(line) for line in marked.splitlines() if line.strip())


def with_markdown_outputs(data: dict[str, Any]) -> dict[str, Any]:
    """results.json with each test's output (and the submission's) in `md` where it holds code."""
    tests = []
    for test in data.get("tests", []):
        markdown = output_markdown(str(test.get("output", "")))
        tests.append(test if markdown is None else {**test, "output": markdown, "output_format": "md"})
    shown = {**data, "tests": tests}
    markdown = output_markdown(str(data.get("output", "")))
    if markdown is not None:
        shown |= {"output": markdown, "output_format": "md"}
    return shown
