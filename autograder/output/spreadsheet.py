"""Cells of CSV files people open in a spreadsheet: text that would start a formula is made inert."""

# A cell that begins with = + - @ (or a tab or carriage return, which some spreadsheets skip before
# reading a formula) is run as a formula when the file is opened in Excel, LibreOffice or Google
# Sheets: a student who names their folder `=HYPERLINK(...)` would put a live link, or worse, into
# the instructor's sheet (OWASP "CSV injection"). Such a cell gets one leading `'`, which every
# spreadsheet shows as text. A cell that already begins with `'` gets one too, so the change can be
# undone exactly (`original_cell`) by whatever reads the file back (`autograder verify`).
#
# Only display cells are changed: names, sections, feedback, the kit's own student ids in
# grades.csv. A cell an importer matches students by (Canvas' ID / SIS columns, Moodle's email,
# username or idnumber) must stay byte for byte what the LMS holds, or the student no longer
# matches; the exports leave those alone and warn instead (`formula_like`).

from __future__ import annotations

from autograder.submissions.students import inert_bidi, original_name

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def formula_like(text: str) -> bool:
    """True when a spreadsheet would read `text` as a formula."""
    return text.startswith(FORMULA_START)


def safe_cell(text: str) -> str:
    """`text` as a spreadsheet shows it as text: a leading `'` if it would start a formula, and each
    bidi control (U+202E ...) written as its code, so it cannot reorder what the sheet shows."""
    text = inert_bidi(text)
    return "'" + text if formula_like(text) or text.startswith("'") else text


def original_cell(text: str) -> str:
    """The text `safe_cell` was given (its exact inverse for a student id, which is case-folded)."""
    if text.startswith("'") and (formula_like(text[1:]) or text[1:].startswith("'")):
        text = text[1:]
    return original_name(text)
