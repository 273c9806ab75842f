"""Open edX's code is the tests' platform, never the kit's: the kit imports none of it, its runtime and
instructor dependencies name none of it, and installing it moved none of the kit's pinned versions."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = Path(__file__).with_name("requirements.txt")
EDX_MODULES = ("django", "lti_consumer", "rest_framework", "xblock", "opaque_keys", "edx_django_utils")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lines: list[str]) -> dict[str, str]:
    """name -> version of each exact pin (`name==1.2` or `name[extra]==1.2`) among requirement lines."""
    found = {}
    for line in lines:
        match = re.match(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?==([^\s;#]+)", line)
        if match:
            found[canonical(match.group(1))] = match.group(3)
    return found


def unlike(wanted: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The pins the installed version does not meet (2.13.0+cpu meets ==2.13.0): pinned, installed."""
    found = {name: (version, importlib.metadata.version(name)) for name, version in wanted.items()}
    return {name: both for name, both in found.items() if both[1] not in SpecifierSet(f"=={both[0]}")}


def test_the_kit_imports_nothing_of_open_edx():
    script = """
import importlib, json, pkgutil, sys
import autograder
for module in pkgutil.walk_packages(autograder.__path__, "autograder."):
    importlib.import_module(module.name)
print(json.dumps(sorted(sys.modules)))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    modules = json.loads(done.stdout.splitlines()[-1])
    assert "autograder.service.app" in modules and "autograder.platforms.lti.ags" in modules
    found = sorted(m for m in modules if m.split(".")[0] in EDX_MODULES)
    assert found == [], f"the kit imported Open edX's code or its framework: {found[:10]}"


def test_the_kits_dependencies_name_none_of_open_edx():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    edx = set(pins(REQUIREMENTS.read_text(encoding="utf-8").splitlines()))
    assert "lti-consumer-xblock" in edx and "django" in edx
    for group, listed in (("dependencies", project["dependencies"]),
                          ("instructor", project["optional-dependencies"]["instructor"]),
                          ("dev", project["optional-dependencies"]["dev"])):
        names = {canonical(re.split(r"[\s\[<>=!~;]", item, maxsplit=1)[0]) for item in listed}
        assert not names & edx, f"pyproject's {group} names {sorted(names & edx)}: a test-only dependency"


def test_installing_it_moved_none_of_the_kits_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    kit = pins([*project["optional-dependencies"]["instructor"], *project["optional-dependencies"]["dev"],
                *(ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()])
    assert {"pyjwt", "cryptography", "requests", "flask"} <= set(kit)
    moved = unlike(kit)
    assert moved == {}, f"installed versions differ from the kit's pins (pinned, installed): {moved}"
    edx = pins(REQUIREMENTS.read_text(encoding="utf-8").splitlines())
    assert not set(edx) & set(kit), "a package pinned by both the kit and the Open edX requirements"
    assert unlike(edx) == {}, f"Open edX's test requirements are not installed as pinned: {unlike(edx)}"
