"""Reproducible zip files: fixed entry times and modes, written whole, then moved into place."""

from __future__ import annotations

import zipfile
from collections.abc import Collection, Mapping
from pathlib import Path

ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the same files always zip to the same bytes


def write_zip(target: Path, files: Mapping[str, bytes], *, executable: Collection[str] = ()) -> Path:
    """`files` (archive name -> bytes, in the order given) as `target`; `executable` names get 0755.

    A reader never sees a half-written zip: it is written beside `target` and renamed over it.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o100755 if name in executable else 0o100644) & 0xFFFF) << 16
            archive.writestr(info, data)
    tmp.replace(target)
    return target
