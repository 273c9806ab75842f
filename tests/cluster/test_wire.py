"""What crosses the cluster is plain data: requests and answers round-trip exactly, nothing else is taken.

Proves: a request carries a submission's files, notes and problem and gives them back as they
were; a node's answer gives back the result it was made from (execution time aside), and a
refusal becomes an error of its kind; the node's pool server refuses what is not a grading
request, and a request keyed with other graders, by name, before anything is graded.
"""

from __future__ import annotations

import json

import pytest
from conftest import make_result

from autograder.cluster import wire
from autograder.cluster.pool_server import PoolService
from autograder.grading.options import GradeOptions
from autograder.grading.provenance import grader_digest
from autograder.submissions.collect import Collected


def test_a_request_gives_back_the_files_as_read():
    collected = Collected({"tinynet.py": b"\x00\xffimport torch\n", "dropout.py": b""}, ("a note",), "")
    request = json.loads(json.dumps(wire.grade_request("nn_module", "ada", collected, "d" * 64, "class/ada")))
    assert wire.collected_of(request) == collected
    assert request["graders"] == "d" * 64 and request["student"] == "ada"


def test_an_answer_gives_back_its_result_and_a_refusal_raises(kit):
    result = make_result(kit.assignment("nn_module"), "ada", lost={"tinynet": 2.5})
    reply = json.loads(json.dumps(wire.answer(result)))
    assert wire.result_of(reply) == result
    assert wire.result_of(reply).score == result.score
    with pytest.raises(wire.NodeRefused, match="not today") as refused:
        wire.result_of(wire.refusal("failed", "not today"))
    assert refused.value.kind == "failed"


def test_the_pool_server_refuses_what_is_not_a_grading_and_other_graders(kit):
    service = PoolService(kit, GradeOptions(sandbox=False), 1)  # never started: nothing is graded here
    assert service.handle({"op": "exec", "code": "print(1)"})["kind"] == "bad-request"
    collected = Collected({"tinynet.py": b"x = 1\n"}, (), "")
    other = wire.grade_request("nn_module", "ada", collected, "0" * 64, "class/ada")
    refused = service.handle(other)
    assert refused["kind"] == wire.GRADERS_DIFFER and "differ from the client's" in refused["error"]
    ours = grader_digest(kit, kit.assignment("nn_module"), kit.language)
    assert service.digest("nn_module") == ours
    # Issue #37: each digest named by the side that holds it (the client's "0"s, the node's own)
    assert f"digest {'0' * 12} on the client, {ours[:12]} on the node" in refused["error"]
    assert wire.node_of(wire.from_node(refused, "tcp://10.0.0.2:4000")) == "tcp://10.0.0.2:4000"
    assert service.handle({**other, "assignment": "no_such_assignment", "graders": ours})["kind"] == "failed"
