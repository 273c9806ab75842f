"""Code written in feedback prose without backticks (`model(x)`, `head(hidden(z)).squeeze(-1)`,
`fc1.weight`) marked as code spans, so the pages and the notebook show it as code."""

from __future__ import annotations

import html
import re

_START = re.compile(r"(?<![\w`.'])[A-Za-z_]\w*")
_SPAN = re.compile(r"(`[^`\n]+`)")


def _closing(text: str, at: int) -> int:
    """The index after the bracket matching the one at `at`, or -1 when it is not closed."""
    pairs = {"(": ")", "[": "]"}
    stack = []
    for index in range(at, len(text)):
        char = text[index]
        if char in pairs:
            stack.append(pairs[char])
        elif char in ")]":
            if not stack or stack.pop() != char:
                return -1
            if not stack:
                return index + 1
    return -1


def _code_at(text: str, start: int, end: int) -> int:
    """The end of the code token that starts with the name text[start:end]; `start` if it is none."""
    called = False
    dotted: list[str] = [text[start:end]]
    while end < len(text):
        if text[end] in "([":
            close = _closing(text, end)
            if close < 0:
                break
            called, end = True, close
        elif text[end] == "." and (name := re.match(r"[A-Za-z_]\w*", text[end + 1:])):
            dotted.append(name.group())
            end += 1 + name.end()
        else:
            break
    if called or (len(dotted) > 1 and not all(len(part) == 1 for part in dotted)):  # not "e.g"
        return end
    return start


def mark_code(text: str) -> str:
    """`text` with each bare code token (a call, a dotted name) in backticks; code spans stay as they are."""
    pieces = _SPAN.split(text)
    for index in range(0, len(pieces), 2):  # the even pieces are outside code spans
        piece, out, at = pieces[index], [], 0
        for match in _START.finditer(piece):
            if match.start() < at:
                continue
            end = _code_at(piece, match.start(), match.end())
            if end > match.start():
                out += [piece[at:match.start()], f"`{piece[match.start():end]}`"]
                at = end
        pieces[index] = "".join(out) + piece[at:]
    return "".join(pieces)


def code_html(text: str) -> str:
    """`text` escaped for HTML, its code spans as <code> (the notebook's self-check: no Markdown)."""
    out = []
    for index, piece in enumerate(_SPAN.split(text)):
        out.append(f"<code>{html.escape(piece[1:-1])}</code>" if index % 2 else html.escape(piece))
    return "".join(out)
