"""The LTI fixtures the service's and platforms' tests share: the tool's key, the stand-in LMS, the tool.

A test module tunes them by module attributes instead of writing its own copies:
`PLATFORM_LIFETIME` (seconds the stand-in platform may live, a bound only), `LINEITEM` (the label of
the line item `lms` grades into) and `service_options(kit)` (ServiceSettings' keyword arguments:
another kit, limits, a clock). A module that needs something else defines its own fixture of the
same name, which pytest prefers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
for helpers in ("service", "platforms"):
    if str(TESTS / helpers) not in sys.path:
        sys.path.insert(0, str(TESTS / helpers))

from conftest import sandbox_works  # noqa: E402
from lms import CLIENT_ID, KEY_ID, Lms, write_platform_toml  # noqa: E402
from lti_platform import LocalPlatform  # noqa: E402
from served import Served, serving  # noqa: E402

from autograder.config import Kit  # noqa: E402
from autograder.platforms.lti.keys import generate_key_pair  # noqa: E402
from autograder.service.settings import Limits, ServiceSettings, load_launch  # noqa: E402

ToolKey = tuple[Path, dict[str, Any]]  # the tool's private key file and its public JWK


@pytest.fixture(scope="session")
def tool_key(tmp_path_factory: pytest.TempPathFactory) -> ToolKey:
    """One key pair of the tool for the session (RSA keys are slow to make; each module's platform
    and service are still their own)."""
    pem, jwk = generate_key_pair(kid=KEY_ID)
    path = tmp_path_factory.mktemp("keys") / "tool.pem"
    path.write_bytes(pem)
    return path, jwk


@pytest.fixture(scope="module")
def platform(tool_key: ToolKey, request: pytest.FixtureRequest) -> Iterator[LocalPlatform]:
    """The stand-in LTI 1.3 platform (lti1p3platform) on 127.0.0.1, one per test module."""
    lifetime = float(getattr(request.module, "PLATFORM_LIFETIME", 1800.0))
    with LocalPlatform(tool_key[1], client_id=CLIENT_ID, max_lifetime=lifetime) as running:
        yield running


@pytest.fixture(scope="module")
def service(kit: Kit, platform: LocalPlatform, tool_key: ToolKey, request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The kit's service, registered with the module's platform, in a thread on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("service")
    launch = load_launch(write_platform_toml(folder, platform, tool_key[0]))
    options: dict[str, Any] = {"limits": Limits(uploads_per_minute=50)}
    tune = getattr(request.module, "service_options", None)
    if tune is not None:
        options.update(tune(kit))
    served_kit = options.pop("kit", kit)
    settings = ServiceSettings(served_kit, folder / "data", launch=launch, sandbox=sandbox_works(kit),
                               **options)
    with serving(settings) as served:
        yield served


@pytest.fixture(scope="module")
def lms(platform: LocalPlatform, service: Served, request: pytest.FixtureRequest) -> Lms:
    """The module's platform as its tests drive it, with one line item the launches grade into."""
    label = str(getattr(request.module, "LINEITEM", "nn.Module"))
    return Lms(platform, service.url, platform.add_lineitem(label, 100.0))
