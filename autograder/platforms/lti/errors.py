"""What stops an LTI publish: the root LtiError and the HTTP failures the publish tells apart."""

from __future__ import annotations

from autograder.errors import AutograderError


class LtiError(AutograderError):
    """PLATFORM.toml, the key, the roster or the platform stopped a publish."""


class LtiPublishIncomplete(LtiError):
    """Some scores were refused or are still pending: the message says which; rerun to retry."""

    exit_code = 4


class TokenRefused(LtiError):
    """The platform's token endpoint refused the client assertion (or the request)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class AuthRejected(LtiError):
    """A service kept answering 401 after a fresh token."""

    def __init__(self, message: str, status: int = 401):
        super().__init__(message)
        self.status = status


class PlatformUnavailable(LtiError):
    """The platform could not be reached, or kept answering 429/5xx after every retry."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status
