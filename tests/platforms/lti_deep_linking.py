"""The stand-in LMS's deep-linking return URL: a tool's LtiDeepLinkingResponse read as Canvas and Moodle do.

What the library (lti1p3platform 0.1.8) does, unchanged: `validate_deeplinking_resp` checks the
JWT's RS256 signature against the tool's registered key chosen by the header's kid and alg, that
the message type is LtiDeepLinkingResponse, and that every content item's type is one the
platform accepts (ltiResourceLink only, as the request said).
What this adds (the library leaves it out): the claims Canvas and Moodle refuse a response
without: iss = the client id, aud naming the platform's issuer, iat and an unexpired exp, a nonce,
the deployment id and version 1.3.0, the request's opaque `data` returned unchanged (and once);
for each ltiResourceLink, a URL on the tool's host, custom parameters as strings, and a lineItem
with a positive scoreMaximum. Then it does what they do with it: a resource link holding the
custom parameters, and a line item (label, scoreMaximum, resourceId, tag) for its gradebook column;
`available`/`submission` become the link's dates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import jwt

if TYPE_CHECKING:
    from lti_platform import LocalPlatform

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"
DATA = "https://purl.imsglobal.org/spec/lti-dl/claim/data"


class Refused(Exception):
    """A response the LMS would not take: its message says why."""


@dataclass
class CreatedLink:
    """A link the LMS made from a content item: what a launch of it carries."""

    resource_link_id: str
    url: str
    title: str
    custom: dict[str, str]
    lineitem: str  # the line item's URL (the AGS claim's lineitem)
    available: dict[str, str] = field(default_factory=dict)
    submission: dict[str, str] = field(default_factory=dict)


@dataclass
class DeepLinkingState:
    """What the platform sent (the `data` of each request not answered yet) and what it made."""

    tool_host: str = ""
    pending_data: list[Any] = field(default_factory=list)
    links: list[CreatedLink] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)  # the claims of every accepted response
    refusals: list[str] = field(default_factory=list)


def verified(platform: LocalPlatform, token: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The response's claims and content items, checked as the module's docstring says."""
    conf = platform.conf
    conf.checking_assertions = False  # a deep-linking response is no client assertion (no sub, no jti)
    try:
        items = conf.validate_deeplinking_resp({"JWT": token})
    except Exception as exc:  # noqa: BLE001  the library raises its own and PyJWT's
        raise Refused(f"{type(exc).__name__}: {exc}") from None
    finally:
        conf.checking_assertions = True
    claims = jwt.decode(token, options={"verify_signature": False})  # checked just above
    audience = claims.get("aud") if isinstance(claims.get("aud"), list) else [claims.get("aud")]
    wanted = {
        "iss is the client id": claims.get("iss") == platform.client_id,
        "aud names the platform": platform.issuer in audience,
        "iat is given": isinstance(claims.get("iat"), int),
        "exp is ahead": isinstance(claims.get("exp"), int) and claims["exp"] > time.time(),
        "a nonce is given": bool(claims.get("nonce")),
        "the deployment is the platform's": claims.get(CLAIM + "deployment_id") == platform.deployment_id,
        "version 1.3.0": claims.get(CLAIM + "version") == "1.3.0",
    }
    missing = [what for what, ok in wanted.items() if not ok]
    if missing:
        raise Refused("the response fails: " + ", ".join(missing))
    state = platform.deep_linking
    if DATA in claims and claims[DATA] is not None:
        if claims[DATA] not in state.pending_data:
            raise Refused("the response's data is not that of a request waiting for one")
        state.pending_data.remove(claims[DATA])
    elif state.pending_data:
        raise Refused("the response does not return the request's data")
    for item in items:
        _check_item(item, state.tool_host)
    return claims, items


def _check_item(item: dict[str, Any], tool_host: str) -> None:
    url = str(item.get("url") or "")
    if urlsplit(url).netloc != tool_host:
        raise Refused(f"the link's url {url!r} is not on the tool's host {tool_host}")
    custom = item.get("custom") or {}
    if not isinstance(custom, dict) or not all(isinstance(v, str) for v in custom.values()):
        raise Refused("custom parameters must be strings")
    lineitem = item.get("lineItem")
    if lineitem is not None:
        score_maximum = lineitem.get("scoreMaximum") if isinstance(lineitem, dict) else None
        number = isinstance(score_maximum, int | float) and not isinstance(score_maximum, bool)
        if not number or score_maximum <= 0:
            raise Refused(f"lineItem.scoreMaximum must be a number > 0, got {score_maximum!r}")


def create_links(platform: LocalPlatform, items: list[dict[str, Any]]) -> list[CreatedLink]:
    """Each ltiResourceLink as a link of the course, with its gradebook column (line item)."""
    made = []
    for item in items:
        number = len(platform.deep_linking.links) + 1
        link_id = f"deep-linked-{number}"
        lineitem = dict(item.get("lineItem") or {"scoreMaximum": 100})
        data = {"label": lineitem.get("label") or item.get("title") or link_id,
                "scoreMaximum": lineitem["scoreMaximum"], "resourceLinkId": link_id}
        data.update({k: lineitem[k] for k in ("resourceId", "tag") if lineitem.get(k)})
        created = platform.store.add_lineitem(data)
        link = CreatedLink(link_id, str(item["url"]), str(item.get("title") or ""),
                           dict(item.get("custom") or {}), str(created["id"]),
                           dict(item.get("available") or {}), dict(item.get("submission") or {}))
        platform.deep_linking.links.append(link)
        made.append(link)
    return made
