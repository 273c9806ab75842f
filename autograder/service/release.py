"""What a student may see of a grade now: the ledger's release rule (ledger/release.py), for the service.

The page (history.py), the passback (passback.py) and the release clock all ask `release_of` with
the ledger's `Rules` of the assignment (its release record and its students' extensions).
"""

from autograder.ledger.release import (
    ALL,
    AT,
    HELD,
    NONE,
    NOW,
    PUBLIC,
    Release,
    Rules,
    next_change,
    release_of,
    visible,
)

__all__ = ["ALL", "AT", "HELD", "NONE", "NOW", "PUBLIC", "Release", "Rules", "next_change", "release_of",
           "visible"]
