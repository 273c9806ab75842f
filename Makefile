# The two commands of the README. Both set up a fresh machine first (idempotent).
.PHONY: setup sample test

setup:
	@scripts/setup

sample: setup
	.venv/bin/autograder grade examples/class --out graded

test: setup
	.venv/bin/python -m pytest -q
