"""The kit's exceptions: one root for everything the kit itself could not do."""


class AutograderError(Exception):
    """The kit could not do what was asked; the message says what to do next."""

    exit_code = 2


class ConfigError(AutograderError):
    """grading.toml (or another config file) is missing or wrong."""


class MarkerError(AutograderError):
    """Solution markers in a reference file are nested, unclosed or stray."""


class SandboxUnavailable(AutograderError):
    """Isolation for student code is not available on this machine."""

    exit_code = 3


class WorkerProtocolError(AutograderError):
    """The sandboxed worker pool stopped answering and could not be restarted."""


class ClusterError(AutograderError):
    """Grading on a Dask cluster could not go on: no scheduler, no nodes, or nodes with other graders."""

    exit_code = 4


class LedgerError(AutograderError):
    """The ledger (the gradebook's SQLite file) refused a write or could not be read: the message says why."""
