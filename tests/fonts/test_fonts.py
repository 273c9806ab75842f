"""The embedded Bengali faces: a real Regular and a real Bold, each declared at its own weight."""

from __future__ import annotations

from autograder import fonts


def test_a_real_regular_and_a_real_bold_face_each_at_its_weight():
    assert sorted(fonts.FACES) == [400, 700]
    regular, bold = (fonts.FACES[w].read_bytes() for w in (400, 700))
    assert regular[:4] == bold[:4] == b"wOF2" and regular != bold
    css = fonts.font_css("bn")
    assert css.count("@font-face") == 2 and "font-weight: 400;" in css and "font-weight: 700;" in css
    assert "100 900" not in css  # a static face declared for every weight draws bold as regular
    assert fonts.font_css("en") == "" and fonts.FAMILY in fonts.font_family("bn")
    assert "SIL Open Font License" in (fonts.FONTS / "OFL.txt").read_text(encoding="utf-8")
