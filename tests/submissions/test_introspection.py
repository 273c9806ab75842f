"""Lines that look into the interpreter are listed for review, with file and line."""

from __future__ import annotations

from autograder.submissions.introspection import review_flags


def test_introspection_is_listed_by_file_and_line():
    source = (b"import gc\nimport sys\nimport torch\n\n"
              b"def f():\n    frame = sys._getframe(1)\n    return frame.f_back.f_globals\n\n"
              b"def g():\n    return [o for o in gc.get_objects()]\n\nPATH = '/proc/self/mem'\n")
    flags = review_flags({"tinynet.py": source, "data.py": b"import torch\nX = torch.ones(3)\n"})
    assert "tinynet.py:1: imports the garbage collector" in flags
    assert "tinynet.py:6: frame walking" in flags
    assert "tinynet.py:7: a frame's globals" in flags
    assert "tinynet.py:10: the garbage collector's objects" in flags
    assert "tinynet.py:12: the process's own memory" in flags
    assert not [f for f in flags if f.startswith("data.py")]


def test_ordinary_code_is_not_listed_and_broken_code_is_skipped():
    honest = b"import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    pass\n"
    assert review_flags({"a.py": honest, "b.py": b"def broken(:\n"}) == ()
