"""Lets an instructor run these graders with plain pytest: see autograder/pytest_plugin.py."""

from autograder.graders import _autograder_worker, challenge, params, pytest_addoption, worker

__all__ = ["_autograder_worker", "challenge", "params", "pytest_addoption", "worker"]
