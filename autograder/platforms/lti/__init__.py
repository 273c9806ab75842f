"""Grades to an LMS through LTI 1.3: PLATFORM.toml, the tool's keys, the AGS client, the publish."""
