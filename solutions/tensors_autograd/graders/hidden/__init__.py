"""Hidden checks of tensors_autograd: random inputs against the references, autograd spies, edges."""
