"""`autograder serve`: the LTI 1.3 tool students submit through and read their feedback in."""
