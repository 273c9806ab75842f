"""The docs by role: the README is a front door into the site, and every command is on a reader's page.

The site itself is built by `make test` (`mkdocs build --strict`: links, the nav, the generated
reference); its commands are run by test_docs_commands.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click

from autograder.cli import main

ROOT = Path(__file__).resolve().parents[1]
ROLES = ("students", "instructors", "admins", "authors")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def commands(command: click.Command, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from commands(sub, (*prefix, name))
    else:
        yield " ".join(prefix)


def test_the_readme_is_a_front_door_into_the_site() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, "README.md is the front door: at most 150 lines, the rest in docs/"
    assert "make sample" in text and "make test" in text, "the two set-up commands"
    targets = LINK.findall(text)
    into_site = [t for t in targets if t.startswith("docs/")]
    assert {t.split("/")[1] for t in into_site} >= {*ROLES, "reference"}, "a link into each role's section"
    missing = [t for t in targets if not t.startswith(("http://", "https://")) and not (ROOT / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_every_command_is_on_a_readers_page() -> None:
    pages = {path: path.read_text(encoding="utf-8") for role in ROLES
             for path in sorted((ROOT / "docs" / role).glob("*.md"))}
    names = list(commands(main))
    assert len(names) >= 20, names
    for name in names:
        used = [p.relative_to(ROOT).as_posix() for p, text in pages.items() if f"autograder {name}" in text]
        assert used, f"`autograder {name}` is on no page of {', '.join(ROLES)}: say who needs it, and how"


def test_each_role_has_its_commands() -> None:
    wanted = {
        "students": ("autograder check", "from autograder import check", "--lang bn"),
        "instructors": ("autograder grade", "autograder verify", "autograder adjust", "autograder extend",
                        "autograder release", "autograder export canvas", "autograder export moodle",
                        "autograder gradescope build", "autograder export junit", "autograder publish lti",
                        "autograder similarity", "autograder exam build"),
        "admins": ("autograder serve --demo", "serve --workers", "--behind-proxy", "autograder lti keygen",
                   "autograder worker", "/demo/student?as=NAME", "/demo/lms"),
        "authors": ("autograder new", "autograder build"),
    }
    for role, needles in wanted.items():
        text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / role).glob("*.md"))
        absent = [n for n in needles if n not in text]
        assert not absent, f"docs/{role}/ does not show {absent}"
