"""What the tests of the instructor's pages read of a page: its tags (nothing hostile live), its tables."""

from __future__ import annotations

from html.parser import HTMLParser

from markupsafe import escape

ALLOWED_SCRIPT_TYPES = ("application/json",)
OUR_FRAMES = ("feedback", "report")


class Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def assert_inert(text: str, where: str, hostile: tuple[str, ...]) -> None:
    """No hostile string raw, no event handler, no javascript: URL, no script or frame but the tool's own."""
    for payload in hostile:
        assert payload not in text, f"{where}: {payload!r} is in the page raw"
    parser = Tags()
    parser.feed(text)
    for tag, attrs in parser.tags:
        assert not [a for a in attrs if a.startswith("on")], f"{where}: <{tag} {attrs}>"
        assert not any(v.strip().lower().startswith("javascript:") for v in attrs.values()), where
        if tag == "script":
            ours = attrs.get("src", "").startswith("/static/") or attrs.get("type") in ALLOWED_SCRIPT_TYPES
            assert ours, f"{where}: a script that is not the tool's: {attrs}"
        if tag in ("iframe", "img", "object", "embed"):
            assert tag == "iframe" and attrs.get("id") in OUR_FRAMES, f"{where}: <{tag} {attrs}>"
        if tag == "svg":
            assert attrs.get("role") == "img", f"{where}: <svg {attrs}>"


def shown_escaped(text: str, payload: str) -> bool:
    """The payload is in the page as text (escaped by Jinja, or by the feedback's own escaping)."""
    return str(escape(payload)) in text or payload.replace("&", "&amp;").replace("<", "&lt;").replace(
        ">", "&gt;").replace('"', "&quot;") in text


class Table(HTMLParser):
    """The rows of one table of a page (by id): each row's cells as text, each cell's `datetime`s and
    links, and the row's attributes."""

    def __init__(self, table_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.table_id = table_id
        self.depth = 0  # >0 inside the table
        self.rows: list[dict[str, object]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "table" and (self.depth or found.get("id") == self.table_id):
            self.depth += 1
        if not self.depth:
            return
        if tag == "tr":
            self.rows.append({"attrs": found, "cells": [], "times": [], "links": []})
        elif tag in ("td", "th") and self.rows:
            self._cell = []
        elif tag == "time" and self.rows:
            self.rows[-1]["times"].append(found.get("datetime", ""))  # type: ignore[attr-defined]
        elif tag == "a" and self.rows:
            self.rows[-1]["links"].append(found.get("href", ""))  # type: ignore[attr-defined]

    def handle_endtag(self, tag: str) -> None:
        if not self.depth:
            return
        if tag == "table":
            self.depth -= 1
        elif tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1]["cells"].append(" ".join("".join(self._cell).split()))  # type: ignore[attr-defined]
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self.depth and self._cell is not None:
            self._cell.append(data)


def table_rows(text: str, table_id: str) -> list[dict[str, object]]:
    """The rows of table `table_id` of a page (the header row first)."""
    parser = Table(table_id)
    parser.feed(text)
    return parser.rows
