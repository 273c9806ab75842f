"""Message catalogues (messages/<lang>.toml): read and flattened to "table.key" -> {field: text}."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path
from string import Formatter
from typing import Any

from autograder.errors import ConfigError

FIELDS = ("observed", "expected", "idea")  # every message's fields (label tables aside)
# Tables of a catalogue that hold labels, not messages (observed/expected/idea): the pages' words,
# the exports' sentences, and [titles] (a task or check id -> its title in that language).
LABEL_TABLES = frozenset({"ui", "export", "titles"})


def flatten(table: dict[str, Any], prefix: str = "") -> dict[str, dict[str, str]]:
    """Nested TOML tables to {"table.key": {field: text}}: a table with text values is a message."""
    out: dict[str, dict[str, str]] = {}
    for key, value in table.items():
        if not isinstance(value, dict):
            continue
        name = f"{prefix}{key}"
        if any(isinstance(v, str) for v in value.values()):
            out[name] = {k: v for k, v in value.items() if isinstance(v, str)}
        out.update(flatten(value, name + "."))
    return out


def read_catalogue(path: Path) -> dict[str, dict[str, str]]:
    """One catalogue file, flattened; a TOML error names the file."""
    try:
        return flatten(tomllib.loads(path.read_text(encoding="utf-8")))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def placeholders(text: str) -> Counter[tuple[str, str, str | None]]:
    """The replacement fields of a str.format text: (name, format spec, conversion), with counts."""
    return Counter(
        (name, spec or "", conversion)
        for _, name, spec, conversion in Formatter().parse(text)
        if name is not None
    )


def placeholder_names(entry: dict[str, str]) -> set[str]:
    """The field names every text of one message uses ({call}, {got}, ...)."""
    return {name for text in entry.values() for name, _, _ in placeholders(text)}
