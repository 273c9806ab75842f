"""Public checks of tensors_autograd: shipped to students for self-checking; no reference solutions here."""
