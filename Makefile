# The two commands of the README. Both set up a fresh machine first (idempotent).
.PHONY: setup sample test

setup:
	@scripts/setup

sample: setup
	.venv/bin/autograder grade examples/class --out graded

# The tests also need Chromium (the browser test of the HTML reports).
test:
	@AUTOGRADER_BROWSER=1 scripts/setup
	.venv/bin/ruff check .
	.venv/bin/mypy autograder
	.venv/bin/lint-imports
	.venv/bin/python -m pytest -q
