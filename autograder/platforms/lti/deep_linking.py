"""LTI Deep Linking on the tool side, without Flask: what the kit offers, and the content item for one pick.

An instructor's LtiDeepLinkingRequest asks the tool for content; the answer is PyLTI1p3's
LtiDeepLinkingResponse (`DeepLink.get_response_jwt`, signed with the tool's key) holding one
`ltiResourceLink`: the tool's launch URL, the custom parameter `assignment` the launch then reads,
and a `lineItem` (scoreMaximum = the assignment's points, label, resourceId, tag) from which Canvas
and Moodle make the gradebook column. An exam's window goes as `available` (start to the last
moment work is accepted) and `submission` (start to the deadline), which Canvas shows as the
unlock, lock and due dates. PyLTI1p3 2.0's resource writes neither, so `ResourceLink` adds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem
from pylti1p3.registration import Registration

from autograder.config import Assignment, Kit

DEEP_LINKING_REQUEST = "LtiDeepLinkingRequest"
DEEP_LINKING_RESPONSE = "LtiDeepLinkingResponse"
SETTINGS_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
CUSTOM_KEY = "assignment"  # the custom parameter a launch reads (service/lti_launch.py)


@dataclass(frozen=True)
class TaskOffer:
    """One task of an offered assignment, as the instructor's list shows it."""

    id: str
    title: str
    points: float


@dataclass(frozen=True)
class Offer:
    """One assignment of the kit as an instructor may pick it: what it grades, its points, its window."""

    id: str
    title: str
    points: float
    tasks: tuple[TaskOffer, ...]
    start: datetime | None = None  # an exam's window; None for homework (always open)
    deadline: datetime | None = None
    cutoff: datetime | None = None  # the last moment work is accepted (None: the deadline, or never)

    @property
    def exam(self) -> bool:
        return any(m is not None for m in (self.start, self.deadline, self.cutoff))

    @property
    def closes(self) -> datetime | None:
        """When the link stops accepting work: the cutoff, else the deadline."""
        return self.cutoff or self.deadline


def offer_of(assignment: Assignment) -> Offer:
    exam = assignment.exam
    tasks = tuple(TaskOffer(t.id, t.title or t.id, t.points) for t in assignment.tasks)
    if exam is None:
        return Offer(assignment.id, assignment.title, assignment.max_score, tasks)
    return Offer(assignment.id, assignment.title, assignment.max_score, tasks, exam.start, exam.deadline,
                 exam.cutoff)


def offers(kit: Kit) -> list[Offer]:
    """Every assignment of the kit, the default one first, then in grading.toml's order."""
    ordered = sorted(kit.assignments.values(), key=lambda a: a.id != kit.default_assignment)
    return [offer_of(a) for a in ordered]


def _window(start: datetime | None, end: datetime | None) -> dict[str, str]:
    found = {}
    if start is not None:
        found["startDateTime"] = start.isoformat()
    if end is not None:
        found["endDateTime"] = end.isoformat()
    return found


class ResourceLink(DeepLinkResource):
    """PyLTI1p3's ltiResourceLink with the spec's `available` and `submission` windows (LTI-DL 2.0 §3.1)."""

    available: dict[str, str]
    submission: dict[str, str]

    def __init__(self) -> None:
        self.available, self.submission = {}, {}

    def to_dict(self) -> dict[str, object]:
        item = super().to_dict()
        if self.available:
            item["available"] = dict(self.available)
        if self.submission:
            item["submission"] = dict(self.submission)
        return item


def content_item(offer: Offer, launch_url: str) -> ResourceLink:
    """The ltiResourceLink that makes an LMS link (and its gradebook column) grading `offer`."""
    lineitem = (LineItem().set_score_maximum(offer.points).set_label(offer.title)
                .set_resource_id(offer.id).set_tag(offer.id))
    item = ResourceLink()
    item.set_url(launch_url).set_title(offer.title).set_custom_params({CUSTOM_KEY: offer.id})
    item.set_lineitem(lineitem)
    if offer.exam:
        item.available = _window(offer.start, offer.closes)
        item.submission = _window(offer.start, offer.deadline)
    return item


@dataclass(frozen=True)
class PendingChoice:
    """What a deep-linking request leaves for the instructor's choice: where and how to answer it."""

    issuer: str
    client_id: str
    deployment_id: str
    return_url: str
    data: Any = None  # the platform's opaque `data`, sent back unchanged (the spec's MUST)

    def as_session(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "client_id": self.client_id, "deployment_id": self.deployment_id,
                "return_url": self.return_url, "data": self.data}

    @classmethod
    def from_session(cls, value: Any) -> PendingChoice | None:
        if not isinstance(value, dict):
            return None
        try:
            return cls(str(value["issuer"]), str(value["client_id"]), str(value["deployment_id"]),
                       str(value["return_url"]), value.get("data"))
        except KeyError:
            return None


class KeyedRegistration(Registration):
    """PyLTI1p3's registration whose key id is the one the tool publishes (its JWKS, `lti jwk`), not
    the one PyLTI1p3 derives: the LMS picks the key to check the response's signature by this kid."""

    def __init__(self, issuer: str, client_id: str, private_key_pem: str, kid: str):
        super().__init__()
        self.set_issuer(issuer).set_client_id(client_id).set_tool_private_key(private_key_pem)
        self._kid = kid

    def get_kid(self) -> str:
        return self._kid


def response_jwt(registration: Registration, pending: PendingChoice, items: list[ResourceLink]) -> str:
    """The signed LtiDeepLinkingResponse (PyLTI1p3's DeepLink, the tool's key and kid) carrying `items`."""
    settings: dict[str, Any] = {"deep_link_return_url": pending.return_url}
    if pending.data is not None:
        settings["data"] = pending.data
    deep_link = DeepLink(registration, pending.deployment_id, settings)  # type: ignore[arg-type]
    message = deep_link.get_message_jwt(items)
    if pending.data is None:  # the spec: `data` only when the request carried it
        message.pop("https://purl.imsglobal.org/spec/lti-dl/claim/data", None)
    return str(deep_link.encode_jwt(message))
