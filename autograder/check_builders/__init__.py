"""Reusable shapes of checks (grading side), exported to graders through autograder.graders."""
