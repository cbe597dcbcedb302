"""Ids typed as git revisions are: a unique prefix names a node or event in every
command that takes one, an ambiguous one lists the candidates (exit 2), and the shell
completes ids from the fold (`git gasp completion`, click's protocol, git's bash
completion)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # many CLI runs

GIT_BASH_COMPLETION = Path("/usr/share/bash-completion/completions/git")


def ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode().strip()


def unique(full: str, others: list[str]) -> str:
    """The shortest prefix of `full` that no id of `others` starts with."""
    for n in range(len(full.split("_")[0]) + 2, len(full) + 1):
        if not any(o.startswith(full[:n]) for o in others if o != full):
            return full[:n]
    return full


@pytest.fixture
def ids(agent):
    goal = ok(agent, "record", "goal", "--title", "retry")
    other = ok(agent, "record", "goal", "--title", "other")
    patch = ok(agent, "record", "patch", "--title", "fix", "--advances", unique(goal, [other]))
    return agent, goal, other, patch


def test_a_unique_prefix_names_the_node(ids):
    agent, goal, other, patch = ids
    graph = json.loads(ok(agent, "fold", "--json"))
    rels = graph.get("relations") or graph.get("edges") or []
    assert any(r.get("from") == patch and r.get("to") == goal
               or r.get("src") == patch and r.get("dst") == goal for r in rels), rels
    shown = json.loads(ok(agent, "lineage", unique(patch, [goal, other]), "--json"))
    assert patch in json.dumps(shown) and goal in json.dumps(shown)
    kindless = patch.split("_", 1)[1]
    assert patch in ok(agent, "lineage", kindless, "--json")


def test_an_ambiguous_prefix_lists_the_candidates(ids):
    agent, goal, other, _patch = ids
    proc = gasp(agent, "lineage", "goal_")
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.startswith("git gasp: error: ") and "ambiguous" in err
    assert goal in err and other in err and len(err.strip().splitlines()) == 1


def test_a_missing_id_keeps_the_commands_own_error(ids):
    agent = ids[0]
    proc = gasp(agent, "lineage", "goal_nope")
    assert proc.returncode != 0 and "goal_nope" in out(proc) and "Traceback" not in out(proc)


def test_event_prefixes_in_fold_at_and_log_since(ids):
    agent = ids[0]
    events = [json.loads(x) for x in (agent / "state/events.jsonl").read_text().splitlines()]
    first = events[0]["id"]
    short = unique(first, [e["id"] for e in events])
    at_full = json.loads(ok(agent, "fold", "--at", first, "--json"))
    assert json.loads(ok(agent, "fold", "--at", short, "--json")) == at_full
    since = ok(agent, "log", "--since", short, "--json")
    assert since == ok(agent, "log", "--since", first, "--json")
    assert since and f'"id": "{first}"' not in since
    proc = gasp(agent, "fold", "--at", "event_")
    assert proc.returncode == 2 and "ambiguous" in proc.stderr.decode()


def test_run_prefixes(agent):
    run = ok(agent, "run", "start", "--task", "t")
    assert ok(agent, "run", "finish", "--outcome", "done", "--run", run[:len("run_") + 10]) == run


def _complete(repo: Path, words: str, cword: int) -> list[str]:
    env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=str(cword),
               _GIT_GASP_COMPLETE="bash_complete")
    proc = subprocess.run(["git-gasp"], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines()]


def test_completion_of_commands_options_and_ids(ids):
    agent, goal, other, patch = ids
    assert "lineage" in _complete(agent, "git-gasp lin", 1)
    assert "--advances" in _complete(agent, "git-gasp record patch --adv", 3)
    assert _complete(agent, "git-gasp record patch --advances goal_", 4) == sorted([goal, other])
    assert _complete(agent, "git-gasp lineage patch_", 2) == [patch]


@pytest.mark.skipif(not GIT_BASH_COMPLETION.exists() or not shutil.which("bash"),
                    reason="git's bash completion is not installed")
def test_git_gasp_tab_in_bash_through_gits_completion(ids):
    """`git gasp lineage goal_<TAB>` as bash with git's completion and ours loaded."""
    agent, goal, other, _patch = ids
    script = ok(agent, "completion", "bash")
    probe = f"""
source {GIT_BASH_COMPLETION}
{script}
COMP_WORDS=(git gasp lineage goal_); COMP_CWORD=3; COMP_LINE="git gasp lineage goal_"
COMP_POINT=${{#COMP_LINE}}
__git_wrap__git_main 2>/dev/null || _git
printf '%s\\n' "${{COMPREPLY[@]}}"
COMP_WORDS=(git-gasp lin); COMP_CWORD=1; COMPREPLY=()
_git_gasp_direct
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    proc = subprocess.run(["bash", "--norc", "-c", probe], cwd=agent, capture_output=True,
                          text=True)
    lines = proc.stdout.split()
    assert goal in lines and other in lines, proc.stdout + proc.stderr
    assert "lineage" in lines


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_parse(agent, shell):
    script = ok(agent, "completion", shell)
    assert "_GIT_GASP_COMPLETE" in script and "git-gasp" in script
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"{shell} is not installed")
    check = [exe, "-n"] if shell == "zsh" else [exe, "--no-execute"]
    proc = subprocess.run([*check], input=script, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_git_gasp_tab_in_fish(ids):
    agent, goal, other, _patch = ids
    script = ok(agent, "completion", "fish")
    (agent.parent / "gasp.fish").write_text(script)
    probe = (f"source {agent.parent / 'gasp.fish'}; complete -C 'git gasp lineage goal_'; "
             "complete -C 'git-gasp lin'; complete -C 'git gas'")
    proc = subprocess.run(["fish", "-c", probe], cwd=agent, capture_output=True,
                          text=True)
    words = [line.split("\t")[0] for line in proc.stdout.splitlines()]
    assert goal in words and other in words, proc.stdout + proc.stderr
    assert "lineage" in words and "gasp" in words
