"""Gradescope's test outputs: `md` where the feedback holds code, which Markdown shows as code and
nothing else changes; `text` otherwise (lms.md §1.3)."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from autograder.platforms.gradescope_output import output_markdown, with_markdown_outputs

COMMONMARK = MarkdownIt("commonmark")  # raw HTML on, as a renderer that trusts its input would be


def shown(markdown: str) -> tuple[list[str], list[str]]:
    """The paragraphs a Markdown renderer shows (their text) and its code spans."""
    page = COMMONMARK.render(markdown)
    assert re.fullmatch(r"(<p>.*</p>\n)+", page, re.S), page  # paragraphs only: no list, heading, html
    texts = [html.unescape(re.sub(r"</?code>", "", p)) for p in re.findall(r"<p>(.*?)</p>", page, re.S)]
    assert all("<" not in re.sub(r"</?code>", "", p) for p in re.findall(r"<p>(.*?)</p>", page, re.S))
    return [t.strip("\u00a0") for t in texts], [html.unescape(c) for c in re.findall(r"<code>(.*?)</code>",
                                                                                    page, re.S)]


def test_feedback_with_code_spans_is_markdown_that_shows_them_as_code():
    feedback = ("Observed: `delivery.py` could not be imported: "
                "`SyntaxError: expected ':' (delivery.py, line 7)`\n"
                "Expected: the file imports cleanly (`python -c 'import delivery'`)\n"
                "Idea: lesson: *args, <b>bold</b> & [a link](http://x) stay as written; 1. no list")
    markdown = output_markdown(feedback)
    assert markdown is not None
    texts, code = shown(markdown)
    assert texts == [line.replace("`", "") for line in feedback.splitlines()]
    assert code == ["delivery.py", "SyntaxError: expected ':' (delivery.py, line 7)",
                    "python -c 'import delivery'"]


def test_feedback_without_code_stays_text():
    assert output_markdown("Observed: 3 of 4 calls\nExpected: all 4") is None
    data = {"output": "", "tests": [{"output": "Observed: 3\nExpected: 4", "output_format": "text"},
                                    {"output": "Observed: `f.py` is missing", "output_format": "text"}]}
    out = with_markdown_outputs(data)
    assert [t["output_format"] for t in out["tests"]] == ["text", "md"]
    assert out["tests"][0] == data["tests"][0] and out["output"] == ""
    assert out["tests"][1]["output"] == "Observed: `f.py` is missing"  # nothing there to escape
    assert "output_format" not in out or out["output_format"] == data.get("output_format")


def test_code_words_are_marked_as_the_pages_mark_them():
    markdown = output_markdown("Observed: model(x) has shape ()\nExpected: (1,)")
    assert markdown is not None and "`model(x)`" in markdown
    assert shown(markdown)[0] == ["Observed: model(x) has shape ()", "Expected: (1,)"]


# Any line without a backtick: punctuation, Bangla, spaces and tabs, a list or heading marker first...
LINE = st.text(st.characters(codec="utf-8", exclude_characters="`\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
                             exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), include_characters=" \t"),
               max_size=40) | st.sampled_from(["1. one", "- item", "    indented", "\tTab", "===", "# h",
                                               "> q"])


@given(lines=st.lists(LINE, min_size=1, max_size=4), code=st.text("abc(). _=", min_size=1, max_size=8))
def test_any_feedback_reads_the_same_once_rendered(lines, code):
    code = code.strip() or "x"
    feedback = "\n".join([f"Observed: `{code}`", *lines])
    markdown = output_markdown(feedback)
    assert markdown is not None
    texts, spans = shown(markdown)
    assert [" ".join(t.split()) for t in texts] == [
        " ".join(line.replace("`", "").split()) for line in feedback.splitlines() if line.strip()]
    assert spans[0] == code
