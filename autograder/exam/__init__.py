"""Exams: a variant of the numbers per student, submission times and lateness, bundles, the exam's plan."""
