"""`autograder worker`: make this machine a node of a Dask cluster that grades."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli.common import err, find_kit, friendly, kit_option


@click.command()
@click.option("--scheduler", required=True, help="The Dask scheduler's address, e.g. tcp://10.0.0.5:8786.")
@click.option("--jobs", type=int, default=None, help="Grading slots here (default: cores).")
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None,
              help="Feedback language (must match the machine running grade).")
@click.option("--name", default=None, help="This node's name in the scheduler (default: its address).")
@click.option("--no-sandbox", is_flag=True, help="Run student code without isolation (trusted code only).")
@kit_option
@friendly
def worker(scheduler: str, jobs: int | None, lang: str | None, name: str | None, no_sandbox: bool,
           kit_dir: Path | None) -> None:
    """Grade for the Dask scheduler at SCHEDULER until stopped (Ctrl-C), with a warm pool of JOBS."""
    from autograder.batch import default_jobs
    from autograder.cluster.node import run_node
    from autograder.sandbox.launch import check_available

    kit = find_kit(kit_dir)
    if no_sandbox:
        err.print("[yellow]warning:[/] --no-sandbox: student code runs without isolation")
    else:
        check_available(kit.sandbox.uid_base)
    slots = jobs or default_jobs()
    err.print(f"node: {slots} grading slots for {scheduler} (kit {kit.root}), from when its pool is warm")
    try:
        run_node(scheduler, kit.root, slots, not no_sandbox, lang, name)
    except KeyboardInterrupt:
        err.print("node: stopped")
