"""Graders of the tensors_autograd assignment: probes (worker side), checks and feedback (grading side)."""
