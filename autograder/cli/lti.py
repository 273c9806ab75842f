"""`autograder publish lti` (scores to an LMS through LTI 1.3 AGS) and `autograder lti keygen|jwk|config`.

Register in cli.py with `main.add_command(publish)` and `main.add_command(lti)`. This module does
not import cli.py at import time, so either order of imports works.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from autograder.cli.common import allow_unverified_option, find_kit, friendly, kit_option, require_verified


@click.group()
def publish() -> None:
    """Send the current grades straight to an LMS."""


@publish.command("lti")
@click.argument("out", type=click.Path(path_type=Path, exists=True))
@click.option("--platform", "platform_file", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="PLATFORM.toml: issuer, client_id, deployment_id, token_url, lineitem (or "
                   "lineitems_url and tag), key_id, private_key; optional nrps_url, nrps_match, "
                   "assignment, label, audience.")
@click.option(
    "--roster",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="CSV with columns student,lti_user_id (default: the platform's NRPS, if nrps_url is set).",
)
@click.option(
    "--assignment",
    default=None,
    help="Assignment id (default: PLATFORM.toml's assignment, else the gradebook's only one).",
)
@click.option("--dry-run", is_flag=True, help="Print what would be sent; send and record nothing.")
@click.option("--retries", type=click.IntRange(1, 10), default=4, show_default=True,
              help="Attempts per request on 429, 5xx and connection errors.")
@click.option("--retry-delay", type=click.FloatRange(0.0, 60.0), default=1.0, show_default=True,
              help="First backoff delay in seconds (doubles each attempt, 30 s at most).")
@allow_unverified_option
@kit_option
@friendly
def publish_lti_command(out: Path, platform_file: Path, roster: Path | None, assignment: str | None,
                        dry_run: bool, retries: int, retry_delay: float, allow_unverified: bool,
                        kit_dir: Path | None) -> None:
    """Post each student's score from the graded batch in OUT to the LMS line item (LTI 1.3 AGS).

    What is sent is the grade as it counts (with the instructor's adjustments), as the release
    rule lets its student see it now (`autograder release`; an exam's self-check policy before its
    deadline): a held score is sent by a later publish, once released.

    Scores already sent unchanged are skipped; refused and pending ones are sent again. The log of
    every publish is the table lti_publishes in OUT/gradebook.sqlite. Exit code 4 when some scores
    were refused or are still pending.
    """
    from autograder.errors import ConfigError
    from autograder.ledger.publish_log import iso_timestamp
    from autograder.platforms.lti.ags import RetryPolicy
    from autograder.platforms.lti.config import load_platform
    from autograder.platforms.lti.errors import LtiPublishIncomplete
    from autograder.platforms.lti.publish import publish_lti

    require_verified(out, allow_unverified)
    config = load_platform(platform_file)
    policy = RetryPolicy(attempts=retries, base_delay=retry_delay)
    try:  # the assignment's config: an exam's deadline and self-check policy are part of the release rule
        kit = find_kit(kit_dir)
    except ConfigError as exc:
        if kit_dir is not None:
            raise
        kit = None
        click.echo(f"note: no kit here ({exc}): the ledger's release records alone decide what is sent "
                   "(pass --kit for an exam's deadline)", err=True)
    report = publish_lti(out, config, roster=roster, assignment=assignment, dry_run=dry_run, retry=policy,
                         kit=kit)
    for note in report.notes:
        click.echo(note)
    if report.unmatched:
        source = "roster " + str(roster) if roster else "the platform's members (NRPS)"
        click.echo(
            f"warning: {len(report.unmatched)} student(s) have no LTI user id in {source}, not sent: "
            + ", ".join(report.unmatched),
            err=True,
        )
    if dry_run:
        stamp = iso_timestamp()
        for item in report.planned:
            body = json.dumps(item.body(stamp), ensure_ascii=False)
            click.echo(f"would send {item.student} ({item.reason}): {body}")
        click.echo(report.summary())
        return
    for student, message in report.refused.items():
        click.echo(f"refused: {student}: {message}", err=True)
    for student, message in report.pending.items():
        click.echo(f"pending: {student}: {message}", err=True)
    if report.held:
        click.echo(f"held by the release rule (sent once released): {', '.join(report.held)}", err=True)
    click.echo(report.summary())
    if not report.complete:
        raise LtiPublishIncomplete(
            f"{len(report.refused)} scores refused, {len(report.pending)} pending: fix the cause and run "
            "the same command again (it sends only what is missing or changed)"
        )


@click.group()
def lti() -> None:
    """LTI 1.3 tool: a key pair, its public JWK, the LMS's registration (deep linking too)."""


@lti.command("keygen")
@click.option("--out", "private_key", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Where to write the private key (PEM, mode 0600): PLATFORM.toml's "
                   "private_key.")
@click.option("--kid", default=None, help="Key id (default: the key's RFC 7638 thumbprint).")
@click.option("--bits", type=click.Choice(["2048", "3072", "4096"]), default="2048", show_default=True)
@click.option("--jwks", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also write the public key set {\"keys\": [JWK]} to this file.")
@click.option("--force", is_flag=True, help="Overwrite an existing private key file.")
@friendly
def keygen(private_key: Path, kid: str | None, bits: str, jwks: Path | None, force: bool) -> None:
    """Generate an RSA key pair for RS256; print the public JWK (stdout) to register in the LMS."""
    from autograder.platforms.lti.errors import LtiError
    from autograder.platforms.lti.keys import generate_key_pair

    if private_key.exists() and not force:
        raise LtiError(f"{private_key} exists: pass --force to replace it (the LMS then needs the new JWK)")
    pem, jwk = generate_key_pair(int(bits), kid)
    private_key.parent.mkdir(parents=True, exist_ok=True)
    if force:
        private_key.unlink(missing_ok=True)
    fd = os.open(private_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    if jwks is not None:
        jwks.write_text(json.dumps({"keys": [jwk]}, indent=2) + "\n", encoding="utf-8")
    click.echo(json.dumps(jwk, indent=2))
    click.echo(
        f"wrote {private_key} (keep it secret); in PLATFORM.toml set key_id = {jwk['kid']!r} and "
        f"private_key = {str(private_key)!r}; register the JWK above in the LMS",
        err=True,
    )


@lti.command("jwk")
@click.argument("private_key", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--kid", default=None, help="Key id (default: the key's RFC 7638 thumbprint).")
@friendly
def show_jwk(private_key: Path, kid: str | None) -> None:
    """Print the public JWK of an existing private key (PEM)."""
    from autograder.platforms.lti.keys import load_private_key, public_jwk

    click.echo(json.dumps(public_jwk(load_private_key(private_key, str(private_key)), kid), indent=2))


@lti.command("config")
@click.option("--url", "base_url", required=True,
              help="The tool's public base URL, e.g. https://grader.example.edu (where `serve` is reached).")
@click.option("--lms", type=click.Choice(["canvas", "moodle", "openedx", "all"]), default="all",
              show_default=True,
              help="canvas: the developer key's JSON alone (to paste); moodle: the tool form's fields; "
                   "openedx: the LTI component's settings in Studio.")
@click.option("--title", default="torch-autograder", show_default=True, help="The tool's name in the LMS.")
@friendly
def show_config(base_url: str, lms: str, title: str) -> None:
    """Print what the LMS admin registers: login, launch, deep-linking URL and message type, keys."""
    from autograder.platforms.lti.registration import (
        canvas_config,
        canvas_redirect_uris,
        moodle_fields,
        openedx_fields,
    )

    canvas = json.dumps(canvas_config(base_url, title), indent=2)
    redirects = canvas_redirect_uris(base_url)
    if lms == "canvas":
        click.echo(canvas)
        click.echo(f"Redirect URIs (a field of the developer key's form): {' '.join(redirects)}", err=True)
        return
    lines = []
    if lms == "openedx":
        click.echo("\n".join(f"{label}: {value}" for label, value in openedx_fields(base_url, title)))
        return
    if lms == "all":
        lines += ["# Canvas: Admin > Developer Keys > + LTI Key > Method: Paste JSON", canvas,
                  "# Canvas: Redirect URIs (one a line)", *redirects, "",
                  "# Moodle: Site administration > Plugins > External tool > Manage tools > "
                  "configure a tool manually"]
    for label, value in moodle_fields(base_url, title):
        lines.append(f"{label}: {value}" if "\n" not in value else
                     f"{label}:\n  " + value.replace("\n", "\n  "))
    if lms == "all":
        lines += ["", "# Open edX: Studio > the unit > Add: Advanced > LTI Consumer > Edit (LTI 1.3)",
                  *(f"{label}: {value}" for label, value in openedx_fields(base_url, title))]
    click.echo("\n".join(lines))
