"""What crosses the cluster: a grading request and its answer, as plain JSON-able data, never pickle.

A request carries the submission's collected files (base64), what collection noted, and the
digest of the graders the client keyed the grade with: a node whose own graders differ refuses
it, so a node with a stale copy of the kit can never put its grade under the client's key.
"""

from __future__ import annotations

import base64
from typing import Any

from autograder.errors import ClusterError
from autograder.grading.results import SubmissionResult, result_from_dict, result_to_dict
from autograder.submissions.files import Collected

MAX_REQUEST_BYTES = 8 * 1024 * 1024  # of files per task: Dask moves them in one message
GRADERS_DIFFER = "graders-differ"
GRADERS_RESOURCE = "graders-"  # + a graders' digest: the Dask resource of a node holding those graders


def graders_resource(digest: str) -> str:
    """The Dask resource a node offers for its graders of one assignment (digest: grader_digest)."""
    return GRADERS_RESOURCE + digest


def grade_request(assignment: str, student: str, collected: Collected, graders: str,
                  where: str) -> dict[str, Any]:
    """The request grading one submission; `where` names it in the error when it is too big."""
    size = sum(len(data) for data in collected.files.values())
    if size > MAX_REQUEST_BYTES:
        raise ClusterError(
            f"{where}: its files hold {size / 2**20:.1f} MB, more than a cluster task carries "
            f"({MAX_REQUEST_BYTES // 2**20} MB): remove the large files from it, or grade without --cluster"
        )
    files = {name: base64.b64encode(data).decode("ascii") for name, data in collected.files.items()}
    return {"op": "grade", "assignment": assignment, "student": student, "files": files,
            "notes": list(collected.notes), "problem": collected.problem, "graders": graders}


def collected_of(request: dict[str, Any]) -> Collected:
    """The submission's files as the client read them (on the node)."""
    files = {str(name): base64.b64decode(data, validate=True) for name, data in request["files"].items()}
    return Collected(files, tuple(str(n) for n in request["notes"]), str(request["problem"]))


def answer(result: SubmissionResult) -> dict[str, Any]:
    return {"ok": True, "result": result_to_dict(result)}


def refusal(kind: str, message: str) -> dict[str, Any]:
    return {"ok": False, "kind": kind, "error": message}


def graders_differ(assignment: str, node: str, kit_root: str, nodes: str, clients: str) -> dict[str, Any]:
    """A node's refusal of a request keyed with other graders (`nodes`: its own digest)."""
    return refusal(GRADERS_DIFFER, (
        f"the graders of {assignment} on node {node} ({kit_root}) differ from the client's (digest "
        f"{clients[:12]} on the client, {nodes[:12]} on the node; its kit changed after it registered): "
        "give every node the same kit, kit version and --lang as the machine running grade, and restart it"))


def from_node(reply: dict[str, Any], address: str) -> dict[str, Any]:
    """A node's answer with the node's address on a refusal (the client drops that node)."""
    return reply if reply.get("ok") else {**reply, "node": address}


def node_of(reply: dict[str, Any]) -> str:
    """The address of the node that refused (\"\" when it did not say)."""
    return str(reply.get("node", ""))


def result_of(reply: dict[str, Any]) -> SubmissionResult:
    """The result in a node's answer (the client side); a refusal raises NodeRefused."""
    if not reply.get("ok"):
        raise NodeRefused(str(reply.get("kind", "")), str(reply.get("error", "the node gave no reason")))
    return result_from_dict(reply["result"])


class NodeRefused(ClusterError):
    """A node answered a grading request with a refusal instead of a result."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
