"""The course's own lessons leave no property shared: each has one owner and a mistake failing it alone.

An author may declare a property `shared` (with the reason) in a new assignment's contract while its
graders are young (tests/test_contract_matrix.py accepts a reason and holds the rest: a mutant per
property, a different one each, whose `fails` is exactly the owner; tests/test_catalogue.py grades each
mutant and sees exactly that list fail). The lessons the kit ships are held to issue #44's end state:
none shared, so every property of theirs is proved by a catalogued mistake.
"""

from __future__ import annotations

import pytest
from test_contract_matrix import CONTRACTS

LESSONS = ("nn_module", "tensors_autograd")


@pytest.mark.parametrize("assignment", LESSONS)
def test_no_property_of_a_lesson_is_shared(assignment: str) -> None:
    shared = [f"{task}.{prop['id']}: {prop['shared']}"
              for task, table in sorted(CONTRACTS[assignment].items())
              for prop in table.get("properties", []) if "shared" in prop]
    assert not shared, "properties still judged by more than one check:\n" + "\n".join(shared)

