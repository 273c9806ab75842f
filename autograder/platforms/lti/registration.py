"""What an LMS admin registers for `autograder serve`: its URLs, keys and deep-linking placement, per LMS.

Canvas takes a developer key's JSON ("Paste JSON"): the login, the launch, the public keys, the
AGS and NRPS scopes, and placements whose message type is LtiDeepLinkingRequest (the assignment's
"external tool" picker and the modules' "add item"); its Redirect URIs are a field of the form.
Moodle takes the fields of "configure a tool manually": its Content Selection URL is where its
"Select content" sends the LtiDeepLinkingRequest. Open edX takes the LTI component's settings in
Studio (lti-consumer-xblock, LTI 1.3 on the block): the same URLs, its Registered Redirect URIs as a
JSON list, deep linking on, AGS in its declarative mode (the launch names the block's line item, which
the tool posts to). Both URLs are answered by the same checks.
"""

from __future__ import annotations

import json
from typing import Any

from autograder.platforms.lti.config import LINEITEM_SCOPE, NRPS_SCOPE, SCORE_SCOPE, check_url
from autograder.platforms.lti.deep_linking import DEEP_LINKING_REQUEST

RESULT_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
CANVAS_DEEP_LINKING_PLACEMENTS = ("assignment_selection", "link_selection")
LMS_NAMES = ("canvas", "moodle", "openedx")


def tool_urls(base_url: str) -> dict[str, str]:
    """The tool's addresses under its public base URL (https://HOST, or http on 127.0.0.1)."""
    base = check_url(base_url.rstrip("/"), "--url")
    return {"login": f"{base}/lti/login", "launch": f"{base}/lti/launch",
            "deep_link": f"{base}/lti/deep-link", "jwks": f"{base}/lti/jwks"}


def canvas_config(base_url: str, title: str) -> dict[str, Any]:
    """A Canvas developer key's LTI 1.3 JSON configuration, deep linking included."""
    urls = tool_urls(base_url)
    placements = [{"placement": p, "message_type": DEEP_LINKING_REQUEST, "target_link_uri": urls["deep_link"],
                   "text": title} for p in CANVAS_DEEP_LINKING_PLACEMENTS]
    return {
        "title": title,
        "description": "Autograded PyTorch exercises and exams: students submit, the tool grades and "
                       "sends the score to the gradebook.",
        "oidc_initiation_url": urls["login"],
        "target_link_uri": urls["launch"],
        "public_jwk_url": urls["jwks"],
        "scopes": [LINEITEM_SCOPE, RESULT_SCOPE, SCORE_SCOPE, NRPS_SCOPE],
        "extensions": [{
            "platform": "canvas.instructure.com",
            "privacy_level": "public",  # the launch's name and sourcedid: the kit's student id
            "settings": {"placements": placements},
        }],
        "custom_fields": {},
    }


def canvas_redirect_uris(base_url: str) -> list[str]:
    urls = tool_urls(base_url)
    return [urls["launch"], urls["deep_link"]]


def moodle_fields(base_url: str, title: str) -> list[tuple[str, str]]:
    """Moodle's "External tool configuration" form, field by field (its labels as Moodle shows them)."""
    urls = tool_urls(base_url)
    return [
        ("Tool name", title),
        ("Tool URL", urls["launch"]),
        ("LTI version", "LTI 1.3"),
        ("Public key type", "Keyset URL"),
        ("Public keyset", urls["jwks"]),
        ("Initiate login URL", urls["login"]),
        ("Redirection URI(s)", "\n".join([urls["launch"], urls["deep_link"]])),
        ("Supports Deep Linking (Content-Item Message)", f"yes (Moodle sends {DEEP_LINKING_REQUEST})"),
        ("Content Selection URL", urls["deep_link"]),
        ("Tool configuration usage", "Show in activity chooser and as a preconfigured tool"),
        ("IMS LTI Assignment and Grade Services", "Use this service for grade sync and column management"),
        ("IMS LTI Names and Role Provisioning", "Use this service to retrieve members' information as per "
                                                "privacy settings"),
        ("Share launcher's name with tool", "Always"),
        ("Share launcher's email with tool", "Always"),
        ("Accept grades from the tool", "Always"),
    ]


def openedx_fields(base_url: str, title: str) -> list[tuple[str, str]]:
    """Open edX Studio's LTI component (LTI 1.3, its settings on the block: Configuration Type "New"),
    field by field, its labels as Studio shows them; list values in the JSON its list fields take."""
    urls = tool_urls(base_url)
    return [
        ("Display Name", title),
        ("LTI Version", "LTI 1.3"),
        ("Configuration Type", "New"),
        ("Launch URL", urls["launch"]),
        ("Tool Initiate Login URL (OIDC)", urls["login"]),
        ("Registered Redirect URIs", json.dumps([urls["launch"], urls["deep_link"]])),
        ("Tool Public Key Mode", "Keyset URL"),
        ("Tool Keyset URL", urls["jwks"]),
        ("Deep linking", f"True (Open edX sends {DEEP_LINKING_REQUEST})"),
        ("Deep Linking Launch URL", urls["deep_link"]),
        ("Assignment and Grades", "Declarative (the launch names the block's line item: scores go there)"),
        ("Names & Roles (NRPS)", "True"),
        ("Custom Parameters", json.dumps(["assignment=<id>"])
         + " (<id>: a folder of the course's solutions/; optional: deep linking sets it)"),
        ("This activity is graded", "True"),
        ("Accept grades after due date", "True (an exam's score is sent once released, after its deadline)"),
        ("Share Username", "True"),
        ("Share Full name", "True"),
        ("Share Email", "True"),
    ]
