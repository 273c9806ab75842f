"""The service's texts: its catalogue (messages/service/<lang>.toml) and how its pages write times."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any

from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.output.pages import font_css, font_family

SERVICE_MESSAGES = ENGINE_MESSAGES / "service"

Parts = list[list[str]]  # a text as segments: ["text", "..."] and ["time", ISO 8601], for the page to render


def texts(lang: str) -> dict[str, str]:
    """The pages' texts in `lang` (English where a text is missing)."""
    return load_messages([SERVICE_MESSAGES], lang).get("service", {})


def iso(moment: datetime) -> str:
    """A moment as the pages carry it (UTC, ISO 8601): the browser writes it in its own zone."""
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def iso_text(text: str | None) -> str | None:
    """A stored moment (ISO 8601 text) as the pages carry it; None stays None."""
    return iso(datetime.fromisoformat(text)) if text else None


def utc_text(value: str) -> str:
    """An ISO 8601 moment as plain UTC text ("" for what is not one)."""
    try:
        return plain_time(datetime.fromisoformat(value))
    except ValueError:
        return ""


def plain_time(moment: datetime, tz: tzinfo | None = None) -> str:
    """A moment as text where no browser writes it (the LMS comment, a page before its script runs)."""
    shown = moment.astimezone(tz or UTC)
    return shown.strftime("%Y-%m-%d %H:%M:%S ") + (shown.tzname() or shown.strftime("%z"))


def with_times(template: str, **moments: datetime) -> tuple[str, Parts]:
    """`template` with each `{name}` a moment: as plain text, and as segments for the page."""
    text = template.format(**{k: plain_time(v) for k, v in moments.items()})
    parts: Parts = []
    rest = template
    while rest:
        start = rest.find("{")
        end = rest.find("}", start)
        name = rest[start + 1:end] if start >= 0 and end > start else ""
        if name not in moments:
            parts.append(["text", rest.format(**{k: plain_time(v) for k, v in moments.items()})])
            break
        if start:
            parts.append(["text", rest[:start]])
        parts.append(["time", iso(moments[name])])
        rest = rest[end + 1:]
    return text, parts


def look(lang: str) -> dict[str, Any]:
    """What every page's layout takes for its language: `lang`, and the Bengali font embedded in a
    Bangla page (as the feedback pages embed it: it draws on a machine without a Bengali font)."""
    return {"lang": lang, "font_css": font_css(lang), "font_family": font_family(lang)}
