"""Public checks of nn_module: shipped to students for self-checking; no reference solutions here."""
