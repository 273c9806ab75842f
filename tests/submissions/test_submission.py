"""Submissions are read safely: folders, zips, refused names, links, traversal and bombs."""

import stat
import zipfile

from autograder.submissions.collect import collect
from autograder.submissions.files import MAX_FILE_BYTES
from autograder.submissions.students import student_name


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def test_folder_keeps_python_files_and_refuses_dangerous_names(tmp_path):
    for name in ["tinynet.py", "helpers.py", "conftest.py", "sitecustomize.py", "torch.py",
                 "json.py", "data.py", "evil.pth", "notes.txt"]:
        (tmp_path / name).write_text("x = 1\n")
    got = collect(tmp_path, given=("data.py",))
    assert set(got.files) == {"tinynet.py", "helpers.py"}
    text = " ".join(got.notes)
    for refused in ["conftest.py", "sitecustomize.py", "torch.py", "json.py", "evil.pth"]:
        assert f"`{refused}`" in text
    assert "data.py" not in text and "data.py" not in got.files  # the kit's own copy, silently
    assert "notes.txt" not in text


def test_symlinks_are_not_followed(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 1\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "tinynet.py").symlink_to(secret)
    (sub / "counting.py").write_text("x = 1\n")
    got = collect(sub)
    assert set(got.files) == {"counting.py"}
    assert any("links" in n for n in got.notes)


def test_nested_folder_from_a_zip_is_unwrapped(tmp_path):
    inner = tmp_path / "ada" / "ada-hw"
    inner.mkdir(parents=True)
    (inner / "tinynet.py").write_text("x = 1\n")
    assert set(collect(tmp_path / "ada").files) == {"tinynet.py"}


def test_zip_with_traversal_and_symlink_entries(tmp_path):
    path = tmp_path / "ada.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("hw/tinynet.py", "x = 1\n")
        z.writestr("../../evil.py", "boom\n")
        link = zipfile.ZipInfo("hw/counting.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(link, "/etc/passwd")
    got = collect(path)
    assert set(got.files) == {"tinynet.py"}
    joined = " ".join(got.notes)
    assert "outside the folder" in joined and "links" in joined
    assert not (tmp_path.parent / "evil.py").exists()


def test_zip_bomb_is_cut_at_the_limit(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("tinynet.py", b"#" * (MAX_FILE_BYTES * 50))
    got = collect(path)
    assert got.files == {} and any("unpacks to more" in n for n in got.notes)
    assert got.problem


def test_broken_zip_and_empty_folder_are_problems_not_crashes(tmp_path):
    broken = tmp_path / "bob.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert "not a readable zip" in collect(broken).problem
    empty = tmp_path / "carol"
    empty.mkdir()
    assert collect(empty).problem and collect(empty).files == {}


def test_huge_file_is_refused(tmp_path):
    with open(tmp_path / "tinynet.py", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 10)
    got = collect(tmp_path)
    assert got.files == {} and any("larger than" in n for n in got.notes)


def test_student_name(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "bob.zip").write_bytes(b"")
    assert student_name(tmp_path / "ada") == "ada"
    assert student_name(tmp_path / "bob.zip") == "bob"
