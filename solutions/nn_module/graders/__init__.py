"""Graders of the nn_module assignment: probes (worker side), checks and feedback (grading side)."""
