"""`git gasp completion SHELL`: print the shell completion script (bash, zsh, fish)."""

from __future__ import annotations

import click

from git_gasp.cli.completion import SHELLS, script
from git_gasp.cli.options import CONTEXT


@click.command("completion", context_settings=CONTEXT)
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (commands, options and ids from the fold).

    bash: eval "$(git gasp completion bash)"; zsh: eval "$(git gasp completion zsh)";
    fish: git gasp completion fish | source.
    """
    click.echo(script(shell), nl=False)
