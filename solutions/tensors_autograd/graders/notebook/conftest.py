"""The notebook's test cells: plain asserts run in the student's kernel, never collected by pytest."""

collect_ignore_glob = ["*.py"]  # each cell uses the names the task's cell defined before it
