"""The identity rule and the door: hostile and unlucky names, one student id each, one folder each.

Proves: the NFC and NFD forms of one Bangla name, `Rahim` and `rahim`, and names with stray
whitespace are one id; ids that one escaping would merge (`rahim khan` / `rahim_khan`, `রহিম` /
`রহীম`, whose vowel signs an escaping of letters alone drops) get folders of their own, short and
safe whatever the id (255 bytes, `..`, a device name); two submissions of one id are refused
together, naming both; every entry the roll does not grade is named with its reason.
"""

from __future__ import annotations

import unicodedata
import zipfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from autograder.submissions.roll import take_roll
from autograder.submissions.students import folder_name, is_student_id, student_id, student_name

# ো (U+09CB) decomposes into two code points: a macOS zip spells this name one way, a roster the other.
MOHAMMAD_NFC = unicodedata.normalize("NFC", "মোহাম্মদ")
MOHAMMAD_NFD = unicodedata.normalize("NFD", "মোহাম্মদ")
LONG = "ক" * 80 + "a"  # 241 bytes of UTF-8: with `.zip`, 245 of a name's 255


def _zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("tinynet.py", "x = 1\n")
    return path


def _folder(path: Path) -> Path:
    path.mkdir()
    (path / "tinynet.py").write_text("x = 1\n")
    return path


def test_one_person_one_id_whatever_the_spelling():
    assert MOHAMMAD_NFC != MOHAMMAD_NFD
    assert student_id(MOHAMMAD_NFD) == student_id(MOHAMMAD_NFC) == MOHAMMAD_NFC
    assert student_id("\u09df") == student_id("\u09af\u09bc")  # য়: precomposed, or as NFC has it
    assert student_id("Rahim") == student_id("rahim") == "rahim"
    assert student_id("  Rahim \t Khan\n") == "rahim khan"
    assert student_id("STRASSE") == student_id("straße")  # Unicode case folding, not lower()


@given(st.text())
def test_the_rule_is_idempotent(text):
    once = student_id(text)
    assert student_id(once) == once and (is_student_id(once) or once == "")


def test_names_one_escaping_would_merge_get_folders_of_their_own():
    assert folder_name("rahim khan") != folder_name("rahim_khan") == "rahim_khan"
    ri, rii = folder_name(student_id("রহিম")), folder_name(student_id("রহীম"))
    assert ri != rii and ri.startswith("রহিম~") and rii.startswith("রহীম~")  # vowel signs kept
    assert folder_name("ada") == "ada" and folder_name("a.b@x.edu") == "a.b@x.edu"


@given(st.text(min_size=1))
def test_a_folder_name_is_short_safe_and_says_whether_it_is_the_id(text):
    student = student_id(text)
    if not student:
        return
    name = folder_name(student)
    assert len(name.encode()) <= 64 and "/" not in name and "\0" not in name
    assert name not in (".", "..") and not name.startswith(".")
    assert (name == student) != ("~" in name)  # plain ids hold no `~`: no id can take another's folder


@given(st.text(min_size=1), st.text(min_size=1))
def test_two_ids_never_share_a_folder(a, b):
    first, second = student_id(a), student_id(b)
    if first and second and first != second:
        assert folder_name(first) != folder_name(second)


def test_dot_dot_a_device_and_a_255_byte_id_get_usable_folders(tmp_path):
    for student in ("..", ".", "con", "nul.txt", "~", student_id(LONG)):
        name = folder_name(student)
        assert name != student and "~" in name, student
        (tmp_path / name).mkdir()  # it can be made, and stays inside
        assert (tmp_path / name).resolve().parent == tmp_path.resolve()


def test_two_submissions_of_one_id_are_refused_together_naming_both(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    _zip(klass / "dup.zip")
    _folder(klass / "dup")
    _zip(klass / "Rahim.zip")
    _zip(klass / "rahim.zip")
    _folder(klass / MOHAMMAD_NFC)
    _zip(klass / f"{MOHAMMAD_NFD}.zip")
    _folder(klass / "ada")
    roll = take_roll(klass)
    assert [s for s, _ in roll.entries] == ["ada"]
    assert roll.refused == tuple(sorted(["dup", "rahim", MOHAMMAD_NFC]))
    reasons = {s.name: s.reason for s in roll.skipped}
    assert set(reasons) == {"dup.zip", "dup", "Rahim.zip", "rahim.zip", MOHAMMAD_NFC, f"{MOHAMMAD_NFD}.zip"}
    assert "`dup` and `dup.zip`" in reasons["dup"] and reasons["dup"] == reasons["dup.zip"]
    assert "`Rahim.zip` and `rahim.zip`" in reasons["rahim.zip"] and "none was graded" in reasons["rahim.zip"]


def test_every_entry_the_roll_skips_is_named_with_why(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    _folder(klass / ".git")
    _folder(klass / "__MACOSX")
    (klass / "notes.txt").write_text("not a submission")
    _zip(klass / "...zip")
    _folder(klass / "   ")
    long_zip = _zip(klass / f"{LONG}.zip")
    roll = take_roll(klass)
    assert [(s, p.name) for s, p in roll.entries] == [(student_id(LONG), long_zip.name)]
    assert student_name(long_zip) == student_id(LONG)
    reasons = {s.name: s.reason for s in roll.skipped}
    assert set(reasons) == {".git", "__MACOSX", "notes.txt", "...zip", "   "}
    assert "hidden" in reasons["...zip"] and "neither a folder" in reasons["notes.txt"]
    assert "empty once trimmed" in reasons["   "]


def test_an_id_whose_folder_the_ledger_gives_another_student_is_refused(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    _folder(klass / "rahim khan")
    _folder(klass / "ada")
    folder = folder_name("rahim khan")
    roll = take_roll(klass).beside({folder: "someone else", "ada": "ada"})  # as if sha256 collided
    assert [s for s, _ in roll.entries] == ["ada"]
    (skipped,) = roll.skipped
    assert skipped.name == "rahim khan" and f"its folder {folder} is that of `someone else`" in skipped.reason
