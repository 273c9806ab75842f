"""Academic-integrity evidence, host side: similar files across a class and another variant's numbers.

Nothing here runs student code or changes a grade: files are read as text, normalized and
compared; what is found is listed for the instructor's review, never deducted.
"""
