"""A Python file as normalized tokens and their winnowed fingerprints (host side; nothing is run).

Comments, docstrings and layout are dropped; every name the file binds itself becomes `V`, every
number `N` and every string `S`. What stays as written is what a copier keeps when disguising a
file: keywords, operators, builtins, attribute names (the API: `.zero_grad`, `.state_dict`) and
imported modules, by their full path (`F` of `import torch.nn.functional as F` is
`torch.nn.functional`). Fingerprints are chosen by winnowing (Schleimer, Wilkerson and Aiken,
2003): the smallest hash of every window of `window` consecutive k-grams, so any run of at least
`window + k - 1` shared tokens shares a fingerprint.
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import tokenize
from dataclasses import dataclass

from autograder.integrity.prints import Print, combine, label_hash

BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_")) | {"self", "cls"}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT}
_IMPORT = re.compile(r"^\s*import\s+(.+)$", re.M)
_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?([^)\n]+)\)?", re.M)
# What the fallback reads when the file does not tokenize (an unclosed bracket, a bad indent).
_ROUGH = re.compile(
    r"#[^\n]*|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"[^\"\n]*\"|'[^'\n]*'|[A-Za-z_]\w*"
    r"|\d[\w.]*|\n|\S"
)


@dataclass(frozen=True)
class Token:
    text: str
    line: int


def imported_names(text: str) -> dict[str, str]:
    """Names the file's imports bind -> the module path they stand for (nn -> torch.nn)."""
    names: dict[str, str] = {}
    for match in _IMPORT.finditer(text):
        for part in match.group(1).split(","):
            words = part.split()
            if not words or not re.fullmatch(r"[\w.]+", words[0]):
                continue
            if len(words) == 3 and words[1] == "as":
                names[words[2]] = words[0]
            else:
                names[words[0].split(".")[0]] = words[0].split(".")[0]
    for match in _FROM.finditer(text):
        for part in match.group(2).split(","):
            words = part.split()
            if words and words[0] != "*":
                bound = words[2] if len(words) == 3 and words[1] == "as" else words[0]
                names[bound] = f"{match.group(1)}.{words[0]}"
    return names


def _word(text: str, after_dot: bool, imports: dict[str, str]) -> str:
    if after_dot or keyword.iskeyword(text) or text in BUILTINS:
        return text
    if text in imports:
        return imports[text]
    return "V"


def normalized_tokens(text: str) -> list[Token]:
    """The file's tokens with names, literals, comments, docstrings and layout abstracted."""
    imports = imported_names(text)
    try:
        return _from_tokenize(text, imports)
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return _rough(text, imports)


def _from_tokenize(text: str, imports: dict[str, str]) -> list[Token]:
    out: list[Token] = []
    raw = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _SKIP]
    previous = tokenize.NEWLINE
    for i, tok in enumerate(raw):
        kind, line = tok.type, tok.start[0]
        if (
            kind == tokenize.STRING
            and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
            and (i + 1 == len(raw) or raw[i + 1].type == tokenize.NEWLINE)
        ):
            previous = tokenize.NEWLINE  # a docstring or a bare string: a comment, not code
            continue
        if kind == tokenize.NEWLINE:
            if previous != tokenize.NEWLINE:
                out.append(Token(";", line))
        elif kind == tokenize.INDENT:
            out.append(Token("{", line))
        elif kind == tokenize.DEDENT:
            out.append(Token("}", line))
        elif kind == tokenize.NAME:
            after_dot = bool(out) and out[-1].text == "."
            out.append(Token(_word(tok.string, after_dot, imports), line))
        elif kind == tokenize.NUMBER:
            out.append(Token("N", line))
        elif kind == tokenize.STRING or kind >= tokenize.N_TOKENS:  # f-string parts of newer Pythons
            if not (out and out[-1].text == "S"):
                out.append(Token("S", line))
        else:
            out.append(Token(tok.string, line))
        previous = kind
    return out


def _rough(text: str, imports: dict[str, str]) -> list[Token]:
    """Tokens of a file Python's tokenizer refuses: words, numbers, strings and symbols."""
    out: list[Token] = []
    line = 1
    for match in _ROUGH.finditer(text):
        piece = match.group(0)
        if piece == "\n" or piece.startswith("#"):
            line += piece == "\n"
            continue
        if piece[0] in "\"'":
            if not piece.startswith(('"""', "'''")):
                out.append(Token("S", line))
        elif piece[0].isdigit():
            out.append(Token("N", line))
        elif piece[0].isalpha() or piece[0] == "_":
            out.append(Token(_word(piece, bool(out) and out[-1].text == ".", imports), line))
        else:
            out.append(Token(piece, line))
        line += piece.count("\n")
    return out


def winnow(tokens: list[Token], k: int = 8, window: int = 4, salt: str = "t") -> list[Print]:
    """The winnowed fingerprints of the k-grams of `tokens`, with the lines each k-gram spans."""
    if len(tokens) < k:
        return []
    ids = [label_hash(t.text) for t in tokens]
    first = label_hash(salt)
    grams = [combine(first, *ids[i : i + k]) for i in range(len(ids) - k + 1)]
    chosen: dict[int, Print] = {}
    for start in range(max(1, len(grams) - window + 1)):
        block = grams[start : start + window]
        low = min(block)
        at = start + max(i for i, h in enumerate(block) if h == low)  # the rightmost minimum
        chosen.setdefault(at, Print(grams[at], tokens[at].line, tokens[at + k - 1].line))
    return [chosen[i] for i in sorted(chosen)]


def token_prints(text: str, k: int = 8, window: int = 4) -> list[Print]:
    return winnow(normalized_tokens(text), k, window)
