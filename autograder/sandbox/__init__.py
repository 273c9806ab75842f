"""Host side of the sandbox: starting a worker in bubblewrap, talking to it, the plain-data wire format."""
