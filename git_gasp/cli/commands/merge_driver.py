"""`git gasp merge-driver`: the union merge driver git runs for `merge=gasp` paths."""

from __future__ import annotations

import click

from git_gasp.merge.driver import run


@click.command("merge-driver")
@click.option("--ancestor", required=True, metavar="FILE", help="The common base (git's %O).")
@click.option("--current", required=True, metavar="FILE",
              help="Ours (git's %A); the result is written here.")
@click.option("--other", required=True, metavar="FILE", help="Theirs (git's %B).")
@click.option("--marker-size", default=7, show_default=True, type=int, metavar="N",
              help="Conflict marker length (git's %L).")
@click.option("--path", "repo_path", required=True, metavar="PATH",
              help="The file's path in the repo (git's %P); it picks the rule.")
def merge_driver(ancestor: str, current: str, other: str, marker_size: int,
                 repo_path: str) -> int:
    """Merge an append-only file without losing or duplicating a line.

    Git runs this for paths marked `merge=gasp` in .gitattributes when the
    clone's config (written by `git gasp install-hooks`) holds:

    \b
      merge.gasp.driver = git-gasp merge-driver --ancestor %O --current %A
                          --other %B --marker-size %L --path %P

    \b
    *.jsonl (state/events.jsonl, facts.jsonl): ours, then theirs' new lines
      that ours lacks, by JSON `id` (exact bytes for a line without one).
    JOURNAL.md: base, ours' appended block, theirs' appended block.
    Any other path: git's text merge (git merge-file).

    A side that changed or dropped a base line, or an id with two different
    bodies, is a conflict: markers in the file, the reason on stderr.

    Exit status: 0 merged cleanly, 1 conflict.

    Set GASP_NO_MERGE_DRIVER=1 to turn the driver off (for emergencies): it
    then runs `git merge-file -L ours -L base -L theirs --marker-size N` on the
    three files and exits with its status, exactly as git's text merge would.
    """
    return run(ancestor, current, other, marker_size, repo_path,
               lambda message: click.echo(message, err=True))
