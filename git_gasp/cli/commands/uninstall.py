"""`git gasp uninstall`: take back, in a project, exactly what git-gasp added to it."""

from __future__ import annotations

import os
from pathlib import Path

import click

from git_gasp.base import git
from git_gasp.base.errors import GaspError


@click.command("uninstall")
@click.option("--purge", is_flag=True,
              help="Also delete the state branch's worktree and the branch itself (without "
                   "it both stay, so nothing recorded is lost).")
def uninstall(purge: bool) -> int:
    """Take back what `init --branch`, `adapt … install` (every project scope, --mcp)
    and `install-hooks` added to this project: the agents' hook entries and MCP entries
    (a settings file git-gasp created is removed, one that existed is given back byte
    for byte), the guard hooks, the merge driver and the gasp.* keys of this clone's
    git config, the info/exclude lines. Nothing git-gasp did not write is touched."""
    # the layers load inside the command (cli.commands modules load only base: CONTRIBUTING)
    from git_gasp.adapters.agent_hook_sync import set_enabled
    from git_gasp.adapters.dialects import copilot, cursor, opencode
    from git_gasp.adapters.wiring.agent_hooks import (
        claude_settings_path,
        codex_hooks_path,
        merge_hooks,
        settings_path,
    )
    from git_gasp.adapters.wiring.mcp_entries import install_claude, install_codex, install_settings
    from git_gasp.githooks.install import uninstall as uninstall_hooks
    from git_gasp.store import installs
    from git_gasp.store.location import BRANCH_KEY, KEY, SECTION, configured, find_root

    top = git.work_tree_top(Path.cwd())
    state = configured(top)
    root = Path(find_root(top) or top)
    said: list[str] = []
    for scope in ("project", "local"):
        path = claude_settings_path(top, scope)
        if path.exists() and merge_hooks(path, "claude-code", None).removed:
            said.append(f"removed git-gasp's hooks from {path}")
    codex = codex_hooks_path(top)
    if codex.exists() and merge_hooks(codex, "codex", None).removed:
        said.append(f"removed git-gasp's hooks from {codex}")
    for own in (copilot, opencode):  # their own files, whole
        try:
            path, removed = own.install(top, None)
        except GaspError:
            removed = False  # not ours: left as it is
        if removed:
            said.append(f"removed git-gasp's file {path}")
    for agent in ("gemini", "qwen-code", "droid"):
        for scope in ("project", "local") if agent == "droid" else ("project",):
            path = settings_path(agent, top, scope)
            if path.exists() and merge_hooks(path, agent, None).removed:
                said.append(f"removed git-gasp's hooks from {path}")
    path = settings_path("cursor", top)
    if path.exists() and cursor.install(path, None)[1]:
        said.append(f"removed git-gasp's hooks from {path}")
    try:
        config, new = opencode.mcp_plan(top, True)
    except GaspError:
        new = None  # not readable as JSON: left as it is
    if opencode.install_mcp(top, new):
        said.append(f"removed the gasp MCP server from {config}")
    for path, changed, *_ in (install_claude(top, True), install_codex(top, True),
                              *(install_settings(top, rel, True) for rel in (
                                  ".gemini/settings.json", ".qwen/settings.json",
                                  ".cursor/mcp.json", ".factory/mcp.json"))):
        if changed:
            said.append(f"removed the gasp MCP server from {path}")
    said += installs.give_back(top)
    said += uninstall_hooks(root).messages
    if set_enabled(root, False):
        said.append("removed gasp.sync from this clone's git config")
    for key in (f"{SECTION}.{KEY}", f"{SECTION}.{BRANCH_KEY}"):
        if git.config_get(top, key) is not None:
            git.config_unset_local(top, key)
            said.append(f"removed {key} from this clone's git config")
    if state is not None and purge:
        said += _purge(top, state.path, state.branch)
    elif state is not None:
        said.append(f"kept the state: branch {state.branch or '(none)'} and {state.path} "
                    "(--purge deletes them)")
    for line in said:
        click.echo(line)
    return 0


def _purge(top: Path, path: str, branch: str | None) -> list[str]:
    """Delete the state's worktree and branch (what --purge asks for)."""
    out = []
    if os.path.exists(path):
        git.run(top, "worktree", "remove", "--force", path)
        out.append(f"deleted the state's worktree {path}")
    git.run(top, "worktree", "prune", check=False)
    if branch and git.ok(top, "rev-parse", "--verify", "-q", f"refs/heads/{branch}"):
        git.run(top, "branch", "-D", branch)
        out.append(f"deleted branch {branch}")
    return out
