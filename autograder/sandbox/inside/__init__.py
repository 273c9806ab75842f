"""Everything that runs inside the sandbox: the warm worker, relay, task child, probe runtime, integrity."""
