"""A scripted browser for the service's tests: requests with cookies kept like a browser keeps them.

Browsers treat http://127.0.0.1 as a secure origin, so they keep and send `Secure` cookies there;
Python's cookie jar sends them over https only. This policy sends them to loopback over http too.
"""

from __future__ import annotations

import re
from http.cookiejar import DefaultCookiePolicy
from typing import Any

import requests


class LoopbackSecurePolicy(DefaultCookiePolicy):
    def return_ok_secure(self, cookie: Any, request: Any) -> bool:
        host = request.host.split(":")[0] if hasattr(request, "host") else ""
        if host in ("127.0.0.1", "localhost"):
            return True
        return bool(super().return_ok_secure(cookie, request))


class Browser(requests.Session):
    """A session whose cookies follow a browser's rules on 127.0.0.1."""

    def __init__(self) -> None:
        super().__init__()
        self.cookies.set_policy(LoopbackSecurePolicy())

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        # requests merges the session's cookies into a fresh jar with the default policy: ask ours
        prepared = super().prepare_request(request)
        prepared.headers.pop("Cookie", None)
        prepared.prepare_cookies(self.cookies)
        return prepared

    def csrf(self, page: str) -> str:
        """The CSRF token a page carries (meta tag or hidden field)."""
        found = re.search(r'name="csrf-token" content="([^"]+)"', page) or re.search(
            r'name="csrf_token" value="([^"]+)"', page)
        assert found, "the page carries no CSRF token"
        return found.group(1)
