"""What the service's routes share: its state for the server's whole life, the launch, the texts."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from flask import session

from autograder.ledger.inbox import Inbox
from autograder.service.limits import SharedUploadRate, UploadRate
from autograder.service.lti_launch import Launch
from autograder.service.passback import Passback
from autograder.service.queue import GradingQueue
from autograder.service.settings import ServiceSettings
from autograder.service.texts import SERVICE_MESSAGES, texts

__all__ = ["SERVICE_MESSAGES", "ElsewhereQueue", "ServiceState", "current_lang", "current_launch",
           "start_session", "texts"]


class ElsewhereQueue:
    """The grading queue of a web worker under `serve --workers`: the machine's grading process grades,
    and learns of an upload from the gradebook file itself (nothing to wake here)."""

    def wake(self) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass
class ServiceState:
    """What the app's routes share for the server's whole life."""

    settings: ServiceSettings
    inbox: Inbox
    queue: GradingQueue | ElsewhereQueue
    passback: Passback | None
    rate: UploadRate | SharedUploadRate
    nonces: sqlite3.Connection

    def close(self) -> None:
        self.queue.close()
        if self.passback is not None:
            self.passback.close()
        self.nonces.close()
        if isinstance(self.rate, SharedUploadRate):
            self.rate.close()
        self.inbox.close()


# An absolute path of two parts or more: what no page shows (the server's folders are its own).
_SERVER_PATH = re.compile(r"(?<![\w.~@+-])/(?:[\w.@+~-]+/)+[\w.@+~-]*")


def page_text(text: str, state: ServiceState) -> str:
    """`text` (a refusal's reason) as a page shows it: the server's paths never in it."""
    named = {str(state.inbox.book.path): "the gradebook", str(state.settings.kit.root): "the kit",
             str(state.settings.data): "the service's data folder"}
    for path, name in sorted(named.items(), key=lambda item: -len(item[0])):
        text = text.replace(path, name)
    return _SERVER_PATH.sub("(a file on the server)", text)


def current_launch() -> Launch | None:
    return Launch.from_session(session.get("launch"))


def current_lang() -> str:
    found = current_launch()
    return found.lang if found is not None else "en"


def start_session(found: Launch) -> None:
    """The session of a launch (an LMS's or the demo's): a new launch never inherits another user's."""
    session.clear()
    session["launch"] = found.as_session()
    session.permanent = False
