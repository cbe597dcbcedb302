"""`git gasp export otel RUN|--all [-o FILE]`: runs as OpenTelemetry traces (OTLP/JSON)."""

from __future__ import annotations

from pathlib import Path

import click

from git_gasp.cli.ids import NodeId


@click.command("export", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("format_", metavar="FORMAT", type=click.Choice(["otel"]))
@click.argument("run", required=False, metavar="RUN", type=NodeId("run"))
@click.option("--all", "all_", is_flag=True, help="Export every run of the log.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to FILE (replaced atomically) instead of stdout.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The agent repo to read (default: the one here).")
def export(format_: str, run: str | None, all_: bool, output: Path | None,
           repo: Path | None) -> None:
    """Write RUN (an id or a unique prefix of one), or every run with --all, as
    OpenTelemetry spans in OTLP/JSON: one ExportTraceServiceRequest per line, as the
    Collector's file exporter writes them, following the GenAI semantic conventions
    (invoke_agent, chat, execute_tool)."""
    import sys

    from git_gasp.base.errors import UsageError
    from git_gasp.conformance.runner import resolve_agent_root
    from git_gasp.otel.exporter import export_otel

    if all_ == (run is not None):
        raise UsageError("name one RUN to export, or --all (not both)")
    root = resolve_agent_root(str(repo) if repo is not None else None)
    data = export_otel(root, None if all_ else run)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    from git_gasp.base.files import atomic_write

    try:
        atomic_write(output, data)
    except OSError as exc:
        from git_gasp.base.errors import GaspError

        raise GaspError(f"{output}: cannot write ({exc.strerror or exc})") from None
    lines = data.count(b"\n")
    click.echo(f"wrote {lines} run(s) to {output}", err=True)
