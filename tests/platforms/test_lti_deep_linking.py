"""The tool's deep-linking content (platforms/lti/deep_linking.py): the offers, the ltiResourceLink, the
signed response; and what `autograder lti config` gives Canvas and Moodle (platforms/lti/registration.py)."""

from __future__ import annotations

import json

import jwt
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric import rsa

from autograder.cli import main
from autograder.config import Kit
from autograder.platforms.lti.deep_linking import (
    KeyedRegistration,
    PendingChoice,
    content_item,
    offer_of,
    offers,
    response_jwt,
)
from autograder.platforms.lti.keys import generate_key_pair

DATA = "https://purl.imsglobal.org/spec/lti-dl/claim/data"
ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"


def test_the_offers_name_every_assignment_with_its_points_and_window(kit: Kit):
    listed = offers(kit)
    assert listed[0].id == kit.default_assignment
    assert {o.id for o in listed} == set(kit.assignments)
    exam = next(o for o in listed if o.id == "nn_module_exam")
    assert exam.exam and exam.points == kit.assignments["nn_module_exam"].max_score
    assert sum(t.points for t in exam.tasks) == exam.points and exam.closes == exam.cutoff
    assert not next(o for o in listed if o.id == "nn_module").exam


def test_an_exam_link_carries_its_window_and_homework_none(kit: Kit):
    exam = content_item(offer_of(kit.assignments["nn_module_exam"]), "https://tool.test/lti/launch").to_dict()
    assert exam["custom"] == {"assignment": "nn_module_exam"} and exam["url"] == "https://tool.test/lti/launch"
    assert exam["available"] == {"startDateTime": "2025-12-14T10:00:00+06:00",
                                 "endDateTime": "2025-12-14T17:00:00+06:00"}
    assert exam["submission"]["endDateTime"] == "2025-12-14T13:00:00+06:00"
    homework = content_item(offer_of(kit.assignments["tensors_autograd"]), "https://tool.test/lti/launch").to_dict()
    assert "available" not in homework and "submission" not in homework
    assert homework["lineItem"]["scoreMaximum"] == kit.assignments["tensors_autograd"].max_score


@pytest.mark.parametrize("data", ["opaque-1", None])
def test_the_response_is_signed_with_the_tools_key_and_kid(kit: Kit, data: str | None):
    pem, jwk = generate_key_pair(kid="tool-kid")
    registration = KeyedRegistration("https://lms.test", "client-1", pem.decode(), "tool-kid")
    pending = PendingChoice("https://lms.test", "client-1", "deployment-9", "https://lms.test/return", data)
    token = response_jwt(registration, pending, [content_item(offer_of(kit.assignments["nn_module"]),
                                                              "https://tool.test/lti/launch")])
    assert jwt.get_unverified_header(token)["kid"] == "tool-kid"
    public = jwt.PyJWK(jwk).key
    claims = jwt.decode(token, public, algorithms=["RS256"], audience="https://lms.test")
    assert claims["iss"] == "client-1"
    assert claims["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] == "deployment-9"
    assert claims["https://purl.imsglobal.org/spec/lti/claim/message_type"] == "LtiDeepLinkingResponse"
    assert (DATA in claims) == (data is not None) and claims.get(DATA) == data
    [item] = claims[ITEMS]
    assert item["lineItem"]["scoreMaximum"] == 100 and item["custom"] == {"assignment": "nn_module"}
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, other, algorithms=["RS256"], audience="https://lms.test")


def test_lti_config_gives_canvas_and_moodle_the_deep_linking_url_and_message_type():
    runner = CliRunner()
    canvas = runner.invoke(main, ["lti", "config", "--url", "https://grader.example.edu/", "--lms", "canvas"])
    assert canvas.exit_code == 0, canvas.output
    config = json.loads(canvas.stdout)
    placements = config["extensions"][0]["settings"]["placements"]
    assert {p["placement"] for p in placements} == {"assignment_selection", "link_selection"}
    assert {(p["message_type"], p["target_link_uri"]) for p in placements} == \
        {("LtiDeepLinkingRequest", "https://grader.example.edu/lti/deep-link")}
    assert config["oidc_initiation_url"] == "https://grader.example.edu/lti/login"
    assert config["target_link_uri"] == "https://grader.example.edu/lti/launch"
    assert config["public_jwk_url"] == "https://grader.example.edu/lti/jwks"
    assert "https://grader.example.edu/lti/deep-link" in canvas.stderr  # the Redirect URIs field
    moodle = runner.invoke(main, ["lti", "config", "--url", "https://grader.example.edu", "--lms", "moodle"])
    assert moodle.exit_code == 0
    assert "Content Selection URL: https://grader.example.edu/lti/deep-link" in moodle.stdout
    assert "Supports Deep Linking (Content-Item Message): yes (Moodle sends LtiDeepLinkingRequest)" \
        in moodle.stdout
    plain = runner.invoke(main, ["lti", "config", "--url", "http://grader.example.edu"])
    assert plain.exit_code != 0 and "must use https" in plain.output
