# The two commands of the README. Both set up a fresh machine first (idempotent).
.PHONY: setup sample test

setup:
	@scripts/setup

sample: setup
	.venv/bin/autograder grade examples/class --out graded

# The tests also need Chromium (the browser test of the HTML reports) and Open edX's LTI platform code
# (tests/lms_openedx/requirements.txt: a test dependency, never the kit's). The docs site is built strictly
# (a broken link, a page left out of the nav, a reference that no longer matches the code fail it)
# into build/site/, which git ignores.
# The suite runs in parallel processes (pytest-xdist), a test file per process at a time: a file's
# module fixtures (a served tool, a warm pool) start once; the slowest files first, by tests/durations.json
# (tests/conftest.py; scripts/record-test-durations renews it). Each process has its own temp folders, and
# tests listen on ports the OS picks, so nothing is shared but the machine.
TEST_PROCESSES ?= 3

test:
	@AUTOGRADER_BROWSER=1 AUTOGRADER_LMS_OPENEDX=1 scripts/setup
	.venv/bin/ruff check .
	.venv/bin/mypy autograder
	.venv/bin/lint-imports
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir build/site
	AUTOGRADER_REQUIRE_BROWSER=1 .venv/bin/python -m pytest -q -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder
