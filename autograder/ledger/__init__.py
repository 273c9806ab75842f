"""The ledger: one SQLite file per course holding its gradebook, the signed log over it, claims and publishes.

`schema.py` versions every table in one place; `book.py` is the gradebook; `log.py` the
append-only, hash-chained, signed log; `audit.py` holds the two against each other; `signing.py`
the key; `claims.py` the leases of running batches; `publish_log.py` what was sent to an LMS;
`inbox.py` the service's uploads (table `received`: received.py), with the grading processes' claims
on them (grading_claims.py) and the news of their changes across processes (changes.py).
"""
