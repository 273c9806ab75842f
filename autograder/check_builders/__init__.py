"""Check builders: the engine writes the rigorous checks of recurring shapes, the author states the task."""
