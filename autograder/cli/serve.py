"""`autograder serve`: the LTI 1.3 tool students submit through (autograder/service/)."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from autograder.cli.common import err, find_kit, friendly, kit_option


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=8000, show_default=True,
              help="Port to listen on (0: any free one).")
@click.option("--platform", "platform_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="PLATFORM.toml with a [launch] table (auth_login_url, platform_jwks): launches from "
                   "that LMS.")
@click.option("--demo", is_flag=True,
              help="Local demo launches for demo students and an instructor (127.0.0.1 only), a stand-in LMS "
                   "page showing the scores passed back, and every exam open from the server's start.")
@click.option("--data", type=click.Path(path_type=Path, file_okay=False), default=Path("served"),
              show_default=True, help="Folder of the gradebook (with every upload) and the session key.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Grading processes of the warm pool.")
@click.option("--lang", type=click.Choice(["en", "bn"]), default=None,
              help="Language of the pool warmed first (default: the kit's); the other starts on first use.")
@click.option("--max-upload-mb", type=float, default=5.0, show_default=True, help="Largest upload accepted.")
@click.option("--uploads-per-minute", type=int, default=10, show_default=True, help="Per student.")
@click.option("--behind-proxy", is_flag=True,
              help="Behind an https reverse proxy: take the scheme and host from its X-Forwarded-* headers.")
@click.option("--no-sandbox", is_flag=True, help="Run student code without isolation (trusted code only).")
@click.option("--workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="Web workers under gunicorn, beside one grading process (0: one process serves and "
                   "grades, for a small class or a try).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Request threads of each gunicorn worker (a page's long poll holds one). [default: 32]")
@click.option("--cluster", default=None, metavar="ADDRESS",
              help="Grade on the Dask nodes of this scheduler (`autograder worker`), on this machine when "
                   "none holds its graders.")
@click.option("--cluster-wait", type=click.FloatRange(min=1), default=20.0, show_default=True,
              metavar="SECONDS",
              help="With --cluster: a submission sent there that finds no node this long is graded here.")
@kit_option
@friendly
def serve(host: str, port: int, platform_file: Path | None, demo: bool, data: Path, jobs: int,
          lang: str | None, max_upload_mb: float, uploads_per_minute: int, behind_proxy: bool,
          no_sandbox: bool, workers: int, threads: int | None, cluster: str | None,
          cluster_wait: float, kit_dir: Path | None) -> None:
    """Serve the tool: LTI 1.3 login and launch, the student's and the instructor's pages."""
    from autograder.service.demo import demo_settings
    from autograder.service.server import serve as run
    from autograder.service.settings import Limits, ServiceSettings, load_launch

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    launch = load_launch(platform_file) if platform_file is not None else None
    limits = Limits(max_upload_bytes=int(max_upload_mb * 1024 * 1024), uploads_per_minute=uploads_per_minute)
    settings = ServiceSettings(find_kit(kit_dir), data, host=host, port=port, launch=launch, demo=demo,
                               jobs=jobs, sandbox=not no_sandbox, lang=lang, proxied=behind_proxy,
                               limits=limits, cluster=cluster, cluster_wait=cluster_wait)
    settings = demo_settings(settings)  # --demo: every exam's window starts now
    if threads is not None and not workers:
        raise click.UsageError("--threads sets the threads of each gunicorn worker: give --workers N too")

    def ready(url: str) -> None:
        err.print(f"serving on {url}" + (f" (demo: open {url}/demo)" if demo else ""), highlight=False)

    if workers:
        from autograder.service.production import DEFAULT_THREADS, serve_workers

        serve_workers(settings, workers, threads or DEFAULT_THREADS, ready)
    else:
        run(settings, ready)
