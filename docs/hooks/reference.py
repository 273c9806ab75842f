"""mkdocs hook: the Reference's grading.toml page, rendered from the code when the site is built.

The keys each table of grading.toml accepts are asked of autograder/config.py itself (an unknown key
is refused with the list of allowed ones); their meanings come from grading_keys.toml beside this file.
A key the code accepts without a meaning here, or a meaning for a key the code refuses, fails the
build (mkdocs build --strict in `make test`), so the page cannot drift from the parser.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from autograder.config import parse_kit
from autograder.errors import ConfigError

MEANINGS = Path(__file__).with_name("grading_keys.toml")
MARKER = "<!-- grading-toml-keys -->"
PROBE = "__docs_probe__"
MINIMAL: dict[str, Any] = {"kit": {}, "sandbox": {},
                           "assignments": {"a": {"tasks": {"t": {"points": 1}}, "exam": {}}}}
# table (as grading_keys.toml names it) -> (its heading on the page, the path to it in MINIMAL)
TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "grading": ("the file's top level", ()),
    "kit": ("[kit]", ("kit",)),
    "sandbox": ("[sandbox]", ("sandbox",)),
    "assignment": ("[assignments.&lt;id&gt;]", ("assignments", "a")),
    "task": ("[assignments.&lt;id&gt;.tasks.&lt;task&gt;]", ("assignments", "a", "tasks", "t")),
    "exam": ("[assignments.&lt;id&gt;.exam]", ("assignments", "a", "exam")),
}
ALLOWED = re.compile(r"unknown key \S+ \(allowed: ([^)]*)\)")


def accepted_keys(path: tuple[str, ...]) -> list[str]:
    """The keys config.py accepts in the table at `path`, from its own refusal of an unknown one."""
    data = copy.deepcopy(MINIMAL)
    table = data
    for part in path:
        table = table[part]
    table[PROBE] = 1
    try:
        parse_kit(Path("."), data)
    except ConfigError as exc:
        found = ALLOWED.search(str(exc))
        if found:
            return [key.strip() for key in found.group(1).split(",")]
        raise PluginError(f"grading.toml reference: config.py refused the probe at {path} otherwise: "
                          f"{exc}") from None
    raise PluginError(f"grading.toml reference: config.py accepted an unknown key at {path}")


def keys_tables() -> str:
    meanings = tomllib.loads(MEANINGS.read_text(encoding="utf-8"))
    parts = []
    for name, (heading, path) in TABLES.items():
        accepted = accepted_keys(path)
        described = meanings.get(name, {})
        missing = sorted(set(accepted) - set(described))
        extra = sorted(set(described) - set(accepted))
        if missing or extra:
            raise PluginError(f"docs/hooks/grading_keys.toml [{name}] differs from autograder/config.py: "
                              f"undocumented {missing}, not accepted {extra}")
        rows = "\n".join(f"| `{key}` | {described[key]} |" for key in described)
        parts.append(f"### {heading}\n\n| key | meaning |\n|---|---|\n{rows}\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, keys_tables())
    return markdown
