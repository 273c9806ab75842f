"""Judging submissions: graders loaded, checks run, one submission graded, the long-lived pool."""
