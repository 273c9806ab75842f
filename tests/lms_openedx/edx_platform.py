"""Open edX's LTI 1.3 platform for the tests: lti-consumer-xblock's own code, behind Django on 127.0.0.1.

What edX's code does here, unchanged (lti_consumer 11.4.4, read from site-packages):
- `LtiAdvantageConsumer` (lti_1p3/consumer.py), built as edX's LtiConfiguration builds it for a
  configuration stored in its database (models.py `_get_lti_1p3_consumer`: deployment id "1", the
  issuer its LTI API base, the tool's keyset URL, AGS in declarative mode with the block's one line
  item, deep linking, NRPS): `prepare_preflight_url` (the OIDC login initiation), `set_user_data`,
  `set_resource_link_claim`, `set_launch_presentation_claim`, `set_context_claim`,
  `set_custom_parameters`, `set_dl_content_launch_parameters` and `generate_launch_request` (the
  preflight response checked: redirect_uri registered, client_id, nonce, state; the id_token signed
  by `PlatformKeyHandler`), `access_token` (the client-credentials grant: the tool's client assertion
  checked by `ToolKeyHandler` against the keyset the tool publishes), `check_token` (a bearer token and
  its scopes), `check_and_decode_deep_linking_token`, and `get_public_keyset`;
- Django REST framework views made of edX's parts: the score endpoint with edX's parser and renderer
  (`LineItemScoreParser`, `LineItemScoreRenderer`, `IgnoreContentNegotiation`), its permission class
  (`LtiAgsPermissions`: the token's scopes for the `scores` action), `LtiAgsScoreSerializer` and the
  `LtiAgsScore` model's own `full_clean`; the deep-linking return URL validating each content item with
  edX's `LTI_DL_CONTENT_TYPE_SERIALIZER_MAP`.

What this adds, in place of what edX keeps in its database and templates (plugin/views.py reads an
LtiConfiguration row, a block and a user; none exists here): the configuration in memory (`EdxPlatform`),
the scores and content items kept in memory instead of saved, a bearer-token check that finds that
configuration instead of querying it (`ToolTokenAuthentication`, otherwise edX's), JSON answers instead of
edX's HTML pages, and the order of calls of edX's launch gate (`launch_request`).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, JsonResponse
from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt
from lti_consumer.data import Lti1p3LaunchData
from lti_consumer.lti_1p3.consumer import LtiAdvantageConsumer
from lti_consumer.lti_1p3.exceptions import Lti1p3Exception
from lti_consumer.lti_1p3.extensions.rest_framework.constants import LTI_DL_CONTENT_TYPE_SERIALIZER_MAP
from lti_consumer.lti_1p3.extensions.rest_framework.parsers import LineItemScoreParser
from lti_consumer.lti_1p3.extensions.rest_framework.permissions import LtiAgsPermissions
from lti_consumer.lti_1p3.extensions.rest_framework.renderers import LineItemScoreRenderer
from lti_consumer.lti_1p3.extensions.rest_framework.serializers import LtiAgsScoreSerializer
from lti_consumer.lti_1p3.extensions.rest_framework.utils import IgnoreContentNegotiation
from lti_consumer.models import LtiAgsScore
from lti_consumer.utils import (
    choose_lti_1p3_redirect_uris,
    get_data_from_cache,
    get_lti_1p3_context_types_claim,
)
from rest_framework import exceptions as drf_exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from werkzeug.serving import make_server

API = "/api/lti_consumer/v1"
DEEP_LINKING_REQUEST = "LtiDeepLinkingRequest"


def platform_key() -> tuple[str, str]:
    """A platform key made by the test, as edX makes one per LTI configuration: its PEM and its kid."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    return pem, str(uuid.uuid4())


@dataclass
class Person:
    """An Open edX user as its LTI block launches them: edX's role slug, its external user id (the sub)."""

    username: str
    role: str = "student"  # edX's slugs: student, staff, instructor (lti_1p3/constants.py LTI_1P3_ROLE_MAP)
    external_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    name: str = ""
    email: str = ""
    user_id: str = field(default_factory=lambda: str(uuid.uuid4().int % 100000))  # edX's own (never sent)


@dataclass
class Received:
    """One score edX's score endpoint accepted: the serializer's validated data, as it would be saved."""

    user_id: str
    data: dict[str, Any]
    score: LtiAgsScore = field(repr=False)  # its repr asks for the line item, which is never saved


@dataclass
class EdxPlatform:
    """One LTI configuration of an Open edX block (what edX keeps in its LtiConfiguration row), the scores
    and content items it took, and its keys. `studio`: the LTI component's settings the admin entered in
    Studio (what `autograder lti config --lms openedx` printed), once the tool is served at `tool`."""

    base: str  # edX's LTI API base: the issuer and every endpoint's host
    private_key: str
    key_id: str
    config_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    client_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    deployment_id: str = "1"  # what models.py hard-codes ("we're not using multi-tenancy")
    location: str = "block-v1:PyTorchX+PT101+2026+type@lti_consumer+block@nn_module"
    lineitem_id: str = "1"
    tool: str = ""
    studio: dict[str, str] = field(default_factory=dict)
    scores: dict[str, list[Received]] = field(default_factory=dict)
    score_refusals: list[tuple[int, Any]] = field(default_factory=list)
    token_answers: list[dict[str, Any]] = field(default_factory=list)
    content_items: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # what Studio shows the admin (the values platform.toml takes)
    @property
    def launch_gate_url(self) -> str:
        return f"{self.base}{API}/launch/"

    @property
    def token_url(self) -> str:
        return f"{self.base}{API}/token/{self.config_id}"

    @property
    def keyset_url(self) -> str:
        return f"{self.base}{API}/public_keysets/{self.config_id}"

    @property
    def lineitems_url(self) -> str:
        return f"{self.base}{API}/lti/{self.config_id}/lti-ags"

    @property
    def lineitem_url(self) -> str:
        return f"{self.lineitems_url}/{self.lineitem_id}"

    @property
    def deep_link_return_url(self) -> str:
        return f"{self.base}{API}/lti/{self.config_id}/lti-dl/response"

    @property
    def memberships_url(self) -> str:
        return f"{self.base}{API}/lti/{self.config_id}/memberships"

    def consumer(self, *, private_key: str | None = None, client_id: str | None = None,
                 deployment_id: str | None = None) -> LtiAdvantageConsumer:
        """edX's consumer for this configuration, as models.py builds it from the block's Studio settings
        (the keyword arguments: another platform's key, client or deployment, for launches to refuse)."""
        studio = self.studio
        launch = studio.get("Launch URL", "")
        deep_link = studio.get("Deep Linking Launch URL", "") if on(studio, "Deep linking") else ""
        listed = studio.get("Registered Redirect URIs")
        consumer = LtiAdvantageConsumer(
            iss=self.base, lti_oidc_url=studio.get("Tool Initiate Login URL (OIDC)", ""),
            lti_launch_url=launch,
            client_id=client_id or self.client_id, deployment_id=deployment_id or self.deployment_id,
            rsa_key=private_key or self.private_key, rsa_key_id=self.key_id,
            redirect_uris=choose_lti_1p3_redirect_uris(json.loads(listed) if listed else None, launch,
                                                       deep_link),
            tool_key=None, tool_keyset_url=studio.get("Tool Keyset URL", ""))
        mode = studio.get("Assignment and Grades", "Declarative").split()[0].lower()
        if mode != "disabled":
            consumer.enable_ags(lineitems_url=self.lineitems_url,
                                lineitem_url=self.lineitem_url if mode == "declarative" else None,
                                allow_programmatic_grade_interaction=mode == "programmatic")
        if deep_link:
            consumer.enable_deep_linking(deep_link, self.deep_link_return_url)
        if on(studio, "Names & Roles (NRPS)"):
            consumer.enable_nrps(self.memberships_url)
        return consumer

    def launch_data(self, person: Person, *, custom: dict[str, str] | None = None,
                    deep_linking: bool = False, content_item: int | None = None) -> Lti1p3LaunchData:
        """What edX's LTI block hands its launch (lti_xblock.py `get_lti_1p3_launch_data`)."""
        return Lti1p3LaunchData(
            user_id=person.user_id, user_role=person.role, config_id=self.config_id,
            resource_link_id=self.location, external_user_id=person.external_id,
            preferred_username=person.username, name=person.name or None, email=person.email or None,
            launch_presentation_document_target="iframe", context_id="course-v1:PyTorchX+PT101+2026",
            context_type=["course_offering"], context_title="PyTorch 101", context_label="PT101",
            message_type=DEEP_LINKING_REQUEST if deep_linking else "LtiResourceLinkRequest",
            deep_linking_content_item_id=content_item, custom_parameters=custom or {})

    def scores_of(self, person: Person) -> list[Received]:
        with self.lock:
            return list(self.scores.get(person.external_id, []))


def on(studio: dict[str, str], label: str) -> bool:
    """A Studio boolean setting as entered (`True`, perhaps followed by a note)."""
    return studio.get(label, "").split(" ")[0] == "True"


def studio_settings(printed: str) -> dict[str, str]:
    """`autograder lti config --lms openedx`'s lines (`Label: value`) as the settings the admin enters;
    a value's note in parentheses is the admin's to read, not to type."""
    settings = {}
    for line in printed.splitlines():
        label, _, value = line.partition(": ")
        if value.startswith("["):  # a JSON list, perhaps followed by a note
            settings[label] = value[: value.index("]") + 1]
        elif value:
            settings[label] = value.split(" (", 1)[0]
    return settings


class Refused(Exception):
    """What edX's launch gate answers instead of a launch: its HTTP status and message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


_current: list[EdxPlatform] = []


def current() -> EdxPlatform:
    return _current[-1]


def launch_request(platform: EdxPlatform, preflight: dict[str, str], *,
                   consumer: LtiAdvantageConsumer | None = None,
                   staff_only_deep_linking: bool = True) -> dict[str, str]:
    """edX's launch gate (plugin/views.py `launch_gate_endpoint`), its calls in its order: the launch data
    cached by the login, the claims, a deep-linking request for staff only, a deep-linked content item's
    URL and custom parameters, then the signed id_token for the tool's redirect_uri."""
    launch = get_data_from_cache(preflight.get("lti_message_hint", ""))
    if launch is None:
        raise Refused(400, "Unable to find record of an OIDC launch for the provided lti_message_hint")
    consumer = consumer or platform.consumer()
    consumer.set_user_data(user_id=launch.external_user_id or launch.user_id, role=launch.user_role,
                           full_name=launch.name, email_address=launch.email,
                           preferred_username=launch.preferred_username)
    consumer.set_resource_link_claim(launch.resource_link_id)
    consumer.set_launch_presentation_claim(document_target=launch.launch_presentation_document_target,
                                           return_url=launch.launch_presentation_return_url)
    types = get_lti_1p3_context_types_claim(launch.context_type) if launch.context_type else None
    consumer.set_context_claim(launch.context_id, types, launch.context_title, launch.context_label)
    if launch.custom_parameters:
        consumer.set_custom_parameters(launch.custom_parameters)
    if launch.message_type == DEEP_LINKING_REQUEST and consumer.dl:
        if staff_only_deep_linking and launch.user_role not in ("instructor", "staff"):
            raise Refused(403, "Deep Linking can only be performed by instructors and staff.")
    elif launch.deep_linking_content_item_id is not None and consumer.dl:
        attributes = platform.content_items[launch.deep_linking_content_item_id]["attributes"]
        consumer.set_dl_content_launch_parameters(url=attributes.get("url"), custom=attributes.get("custom"))
    try:
        answer = consumer.generate_launch_request(preflight_response=preflight)
    except Lti1p3Exception as exc:
        raise Refused(400, f"Error preparing LTI 1.3 launch: {type(exc).__name__} {exc}") from None
    return {"launch_url": preflight["redirect_uri"], "id_token": answer["id_token"], "state": answer["state"]}


# -- the HTTP side: Django views (ROOT_URLCONF is this module) ----------------------------------------
def launch_gate(request: HttpRequest) -> JsonResponse:
    params = (request.GET if request.method == "GET" else request.POST).dict()
    try:
        return JsonResponse(launch_request(current(), params))
    except Refused as exc:
        return JsonResponse({"error": str(exc)}, status=exc.status)


@csrf_exempt
def access_token(request: HttpRequest, config_id: str) -> JsonResponse:
    """The token endpoint: the form handed to edX's `access_token`, which judges it."""
    platform = current()
    form = dict(parse_qsl(request.body.decode("utf-8"), keep_blank_values=True))
    try:
        answer = platform.consumer().access_token(form)
    except Exception as exc:  # noqa: BLE001  edX raises its own, PyJWT's and KeyError: each is a refusal
        with platform.lock:
            platform.token_answers.append({"refused": f"{type(exc).__name__}: {exc}"})
        return JsonResponse({"error": "invalid_client", "error_description": f"{type(exc).__name__}: {exc}"},
                            status=400)
    with platform.lock:
        platform.token_answers.append(answer)
    return JsonResponse(answer)


def keyset(request: HttpRequest, config_id: str) -> JsonResponse:
    return JsonResponse(current().consumer().get_public_keyset())


class ToolTokenAuthentication(BaseAuthentication):
    """edX's Lti1p3ApiAuthentication (the bearer token checked by the configuration's consumer, which the
    permission class then asks for scopes) with the configuration from memory instead of its table."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, None]:
        auth = request.headers.get("Authorization", "").split()
        if len(auth) != 2 or auth[0].lower() != "bearer":
            raise drf_exceptions.AuthenticationFailed("Missing LTI 1.3 authentication token.")
        consumer = current().consumer()
        try:
            consumer.check_token(auth[1])
        except Exception as err:
            raise drf_exceptions.AuthenticationFailed("Invalid token signature.") from err
        request.lti_consumer = consumer  # type: ignore[attr-defined]  where edX's permission class reads it
        return AnonymousUser(), None


class ScoresView(APIView):
    """POST {lineitem}/scores: edX's LtiAgsLineItemViewset.scores, its classes and its serializer."""

    authentication_classes = (ToolTokenAuthentication,)
    permission_classes = (LtiAgsPermissions,)
    parser_classes = (LineItemScoreParser,)
    renderer_classes = (LineItemScoreRenderer,)
    content_negotiation_class = IgnoreContentNegotiation
    action = "scores"  # the viewset action edX's LtiAgsPermissions grants by scope

    def post(self, request: Request, config_id: str, lineitem_id: str) -> Response:
        platform = current()
        if config_id != platform.config_id or lineitem_id != platform.lineitem_id:
            return Response({"detail": "Not found."}, status=404)
        data = request.data
        user_id = str(data.get("userId", "")) if isinstance(data, dict) else ""
        with platform.lock:
            existing = platform.scores.get(user_id, [])
            serializer = LtiAgsScoreSerializer(instance=existing[-1].score if existing else None, data=data,
                                               context={"request": request})
            if not serializer.is_valid():
                platform.score_refusals.append((400, serializer.errors))
                return Response(serializer.errors, status=400)
            score = LtiAgsScore(**serializer.validated_data)  # edX's model, never saved: its checks judge
            try:
                score.full_clean(exclude=["line_item"], validate_unique=False)
            except ValidationError as exc:
                platform.score_refusals.append((400, exc.message_dict))
                return Response(exc.message_dict, status=400)
            platform.scores.setdefault(user_id, []).append(Received(user_id, dict(serializer.validated_data),
                                                                    score))
        return Response(LtiAgsScoreSerializer(score).data, status=201)


@csrf_exempt
def deep_linking_response(request: HttpRequest, config_id: str) -> JsonResponse:
    """The deep-linking return URL: edX's check of the tool's JWT, then each item through edX's serializer."""
    platform = current()
    try:
        items = platform.consumer().check_and_decode_deep_linking_token(request.POST.get("JWT"))
    except Exception as exc:  # noqa: BLE001  edX answers 403 to any bad token (or 400: a type it lacks)
        return JsonResponse({"error": f"{type(exc).__name__}: {exc}"}, status=403)
    saved = []
    for item in items:
        kind = item.get("type")
        if kind not in LTI_DL_CONTENT_TYPE_SERIALIZER_MAP:
            return JsonResponse({"error": f"content type {kind!r} is not supported by Open edX"}, status=400)
        serializer = LTI_DL_CONTENT_TYPE_SERIALIZER_MAP[kind](data=item)
        if not serializer.is_valid():
            return JsonResponse({"error": serializer.errors}, status=400)
        saved.append({"content_type": kind, "attributes": serializer.validated_data})
    with platform.lock:
        platform.content_items[:] = saved  # edX erases the older selection first
    return JsonResponse({"saved": len(saved)})


urlpatterns = [
    re_path(r"^api/lti_consumer/v1/launch/$", launch_gate),
    path("api/lti_consumer/v1/token/<str:config_id>", access_token),
    path("api/lti_consumer/v1/public_keysets/<str:config_id>", keyset),
    path("api/lti_consumer/v1/lti/<str:config_id>/lti-ags/<str:lineitem_id>/scores", ScoresView.as_view()),
    path("api/lti_consumer/v1/lti/<str:config_id>/lti-dl/response", deep_linking_response),
]


@contextmanager
def serving_edx() -> Iterator[EdxPlatform]:
    """edX's endpoints on 127.0.0.1 (a port the OS picks), a platform key made now; `tool` is set later."""
    server = make_server("127.0.0.1", 0, WSGIHandler(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    pem, kid = platform_key()
    platform = EdxPlatform(f"http://127.0.0.1:{server.server_port}", pem, kid)
    _current.append(platform)
    try:
        yield platform
    finally:
        _current.remove(platform)
        server.shutdown()
        server.server_close()
