"""The Django glue Open edX's LTI code needs, and the suite's two sides: edX's platform and the kit's service.

Django is configured here, before anything of lti_consumer is imported: its apps (lti_consumer's models
are imported by its serializers, never saved: there is no database), an in-memory cache (edX keeps a
launch's data there between the login and the launch), this package's edx_platform.py as the URLs.
lti-consumer-xblock is a test dependency only (tests/lms_openedx/requirements.txt, installed by
`AUTOGRADER_LMS_OPENEDX=1 scripts/setup`, which `make test` runs); the kit never imports it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "service"))  # the service's helpers: served.py, browser.py

if importlib.util.find_spec("lti_consumer") is None or importlib.util.find_spec("rest_framework") is None:
    raise RuntimeError("lti-consumer-xblock is not installed: run `AUTOGRADER_LMS_OPENEDX=1 scripts/setup` "
                       "(`make test` does), which installs tests/lms_openedx/requirements.txt")

import django  # noqa: E402
from django.conf import settings  # noqa: E402

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="tests-lms-openedx",  # noqa: S106  signs nothing here; Django wants one
        ALLOWED_HOSTS=["127.0.0.1"],
        ROOT_URLCONF="lms_openedx.edx_platform",
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "rest_framework",
                        "lti_consumer"],
        MIDDLEWARE=[],
        DATABASES={},
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
        USE_TZ=True,
        PLATFORM_NAME="Open edX (tests)",  # the tool_platform claim's name
        OPENEDX_TELEMETRY=[],  # edx-django-utils would look for New Relic
    )
    django.setup()

from conftest import sandbox_works  # noqa: E402  tests/conftest.py
from served import Served, serving  # noqa: E402

from autograder.cli import main  # noqa: E402
from autograder.config import ExamConfig, Kit  # noqa: E402
from autograder.platforms.lti.keys import generate_key_pair  # noqa: E402
from autograder.service.settings import Clock, Limits, ServiceSettings, load_launch  # noqa: E402

from .edx_platform import EdxPlatform, serving_edx, studio_settings  # noqa: E402

TOOL_KID = "autograder-openedx-1"
EXAM = "openedx_exam"  # nn_module as an exam whose window is open now (the service's clock moves it)
EXAM_OPENS = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
EXAM_DEADLINE = EXAM_OPENS + timedelta(hours=2)


def openedx_kit(kit: Kit) -> Kit:
    """The kit, plus EXAM: nn_module's content as an exam that shows nothing before its deadline."""
    exam = ExamConfig(check="none", start=EXAM_OPENS, deadline=EXAM_DEADLINE,
                      cutoff=EXAM_DEADLINE + timedelta(hours=1))
    target = dataclasses.replace(kit.assignment("nn_module"), id=EXAM, content="nn_module",
                                 title="nn.Module exam (Open edX)", exam=exam)
    return dataclasses.replace(kit, assignments={**kit.assignments, EXAM: target})


@pytest.fixture(scope="session")
def edx() -> Iterator[EdxPlatform]:
    with serving_edx() as platform:
        yield platform


@pytest.fixture(scope="session")
def service(kit: Kit, edx: EdxPlatform, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The kit's service (served.py: build_state, create_app, a threaded server as `serve` runs it) with
    the platform.toml an admin writes from Studio's values; edX then learns the tool's URLs."""
    folder = tmp_path_factory.mktemp("openedx-service")
    pem, _ = generate_key_pair(kid=TOOL_KID)
    (folder / "tool.pem").write_bytes(pem)
    values = {"issuer": edx.base, "client_id": edx.client_id, "deployment_id": edx.deployment_id,
              "token_url": edx.token_url, "key_id": TOOL_KID, "private_key": str(folder / "tool.pem")}
    jwks = json.dumps(edx.consumer().get_public_keyset())  # what edX's keyset URL shows the admin
    lines = [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    lines += ["", "[launch]", f"auth_login_url = {json.dumps(edx.launch_gate_url)}",
              f"platform_jwks = {json.dumps(jwks)}", 'assignment = "nn_module"']
    toml = folder / "platform.toml"
    toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    settings = ServiceSettings(openedx_kit(kit), folder / "data", launch=load_launch(toml),
                               sandbox=sandbox_works(kit), limits=Limits(uploads_per_minute=50),
                               clock=Clock())
    with serving(settings) as served:
        printed = CliRunner().invoke(main, ["lti", "config", "--url", served.url, "--lms", "openedx"])
        assert printed.exit_code == 0, printed.output
        edx.tool, edx.studio = served.url, studio_settings(printed.stdout)  # what the admin enters in Studio
        yield served
