"""LTI Deep Linking in `autograder serve`: an instructor picks one of the kit's assignments from the LMS.

The LMS's "add content" posts a checked LtiDeepLinkingRequest (lti_launch.checked: signature,
issuer, audience, deployment, nonce; PyLTI1p3's validator: a return URL and ltiResourceLink among
the accepted types) to /lti/deep-link (or /lti/launch: the message type decides). An instructor gets
the list of assignments in their language, each with a form (CSRF as every form); a student, or a
request that fails a check, is refused. Choosing one answers the LMS with PyLTI1p3's signed
LtiDeepLinkingResponse (platforms/lti/deep_linking.py) posted from the instructor's browser. The
session holds only the pending choice (where to answer, the platform's `data`) and it is spent by
the answer; nothing is written on the kit's side but the spent nonce, until the LMS launches the link.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, abort, render_template, request, session, url_for

from autograder.platforms.lti.deep_linking import (
    KeyedRegistration,
    PendingChoice,
    content_item,
    offer_of,
    offers,
    response_jwt,
)
from autograder.service import security
from autograder.service.lti_launch import CLAIM, STAFF_ROLES, LaunchRefused, identify
from autograder.service.state import ServiceState, texts
from autograder.service.texts import iso, look

log = logging.getLogger("autograder.service")
SESSION_KEY = "deep_link"
LINK_SOURCES = ("link", "platform", "kit")  # who named a launch's assignment (Launch.assignment_from)


class DeepLinkingRefused(LaunchRefused):
    """A deep-linking request the tool does not answer (a student's); the message is the user's language."""

    def __init__(self, message: str, lang: str):
        super().__init__(message)
        self.lang = lang


def redirect_uri(target_link_uri: str, launch_url: str, deep_link_url: str) -> str:
    """Where the login sends the LMS's message: the deep-linking URL when the LMS asked for it (its
    target_link_uri), else the launch URL; never an address the request names itself."""
    wanted = urlsplit(target_link_uri).path.rstrip("/")
    return deep_link_url if wanted and wanted == urlsplit(deep_link_url).path else launch_url


def request_page(state: ServiceState, data: dict[str, Any]) -> Any:
    """An instructor's checked deep-linking request: the kit's assignments to choose from."""
    config = state.settings.launch
    assert config is not None  # only a configured platform's message gets here
    who = identify(data, config, set(state.settings.kit.assignments))
    t = texts(who.lang)
    roles = [str(r) for r in data.get(CLAIM + "roles") or []]
    if not any(r.endswith(STAFF_ROLES) for r in roles):
        raise DeepLinkingRefused(t["dl_staff_only"], who.lang)
    settings = data.get("https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings") or {}
    return_url = str(settings.get("deep_link_return_url") or "")
    if urlsplit(return_url).scheme not in ("https", "http") or not urlsplit(return_url).netloc:
        raise LaunchRefused("deep linking refused: its deep_link_return_url is not an http(s) address")
    pending = PendingChoice(str(data.get("iss", "")), config.platform.client_id,
                            str(data.get(CLAIM + "deployment_id", "")), return_url, settings.get("data"))
    session.clear()  # a deep-linking request never inherits another user's session, nor opens the pages
    session[SESSION_KEY] = {**pending.as_session(), "lang": who.lang, "name": who.name,
                            "locale": who.time_locale}
    session.permanent = False
    log.info("deep linking: %s asks for content", who.student)
    listed = [{"offer": o, "start": iso(o.start) if o.start else None,
               "deadline": iso(o.deadline) if o.deadline else None,
               "cutoff": iso(o.cutoff) if o.cutoff else None} for o in offers(state.settings.kit)]
    return render_template("service_deep_link.html", t=t, name=who.name, course=who.context,
                           offers=listed, page={"locale": who.time_locale, "texts": {}}, **look(who.lang))


def register(app: Flask, state: ServiceState) -> None:
    """The instructor's choice (/lti/deep-link/choose); /lti/deep-link itself is the launch's view."""
    kit = state.settings.kit
    app.jinja_env.globals["kit_assignment_ids"] = sorted(kit.assignments)

    @app.errorhandler(DeepLinkingRefused)
    def deep_linking_refused(exc: DeepLinkingRefused) -> tuple[Any, int]:
        log.info("deep linking refused: %s", exc)
        t = texts(exc.lang)
        return render_template("service_error.html", t=t, message=str(exc), **look(exc.lang)), 403

    @app.route("/lti/deep-link/choose", methods=["POST"])
    def lti_deep_link_choose() -> Any:
        found = session.get(SESSION_KEY)
        pending = PendingChoice.from_session(found)
        if pending is None or not isinstance(found, dict):
            abort(401)
        lang = "bn" if found.get("lang") == "bn" else "en"
        t = texts(lang)
        wanted = request.form.get("assignment", "")
        if wanted not in kit.assignments:
            known = ", ".join(sorted(kit.assignments))
            message = t["dl_unknown"].format(assignment=wanted, assignments=known)
            return render_template("service_error.html", t=t, message=message, **look(lang)), 400
        config = state.settings.launch
        if config is None or pending.issuer != config.platform.issuer:
            abort(401)
        platform = config.platform
        registration = KeyedRegistration(platform.issuer, platform.client_id,
                                         platform.private_key.read_text(encoding="utf-8"), platform.key_id)
        offer = offer_of(kit.assignments[wanted])
        token = response_jwt(registration, pending, [content_item(offer, url_for("lti_launch_view",
                                                                                  _external=True))])
        session.pop(SESSION_KEY, None)  # one answer per request: the LMS makes one link of it
        parts = urlsplit(pending.return_url)
        security.allow_form_target(f"{parts.scheme}://{parts.netloc}")
        log.info("deep linking: %s chose %s", found.get("name", ""), wanted)
        return render_template("service_deep_link_sent.html", t=t, title=offer.title, token=token,
                               return_url=pending.return_url, page={"locale": str(found.get("locale", "")),
                                                                    "texts": {}}, **look(lang))
