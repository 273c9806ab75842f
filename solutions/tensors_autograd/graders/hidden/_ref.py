"""Reference solutions of this assignment loaded by file path, for hidden checks only (grading process)."""

from autograder.graders import References

module = References.of_graders(__file__).module
