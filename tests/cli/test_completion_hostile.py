"""Completion never inserts a command: ids holding `;`, `$()`, backticks, spaces,
quotes or newlines (a cloned repository chooses its ids) are left out of every shell's
candidates; the rest complete as before."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.testing.events import create, line, ops
from tests.testing.run import commit_all, gasp

HOSTILE = ["goal_x;touch${IFS}PWNED1", "goal_x$(touch PWNED2)", "goal_x`touch PWNED3`",
           "goal_x touch PWNED4", "goal_x'\"; touch PWNED5", "goal_x\ntouch PWNED6",
           "goal_x&&touch PWNED7", "goal_x|touch PWNED8", "goal_x>PWNED9", "goal_x*"]
SAFE = "goal_xsafe"


@pytest.fixture
def hostile(agent: Path) -> Path:
    data = b""
    for n, gid in enumerate([*HOSTILE, SAFE]):
        data += line(f"event_h{n}", "goal.created", {"id": gid, "title": "t", "status": "Open"})
        data += ops(f"event_h{n}o", f"event_h{n}", create(gid, "goal", title="t", status="Open"))
    with open(agent / "state" / "events.jsonl", "ab") as fh:
        fh.write(data)
    commit_all(agent, "hostile ids")
    assert gasp(agent, "check").returncode == 0  # such ids are valid: only the shell is at risk
    return agent


def _protocol(repo: Path, shell: str, words: str, cword: str) -> str:
    """What the installed command answers a `shell` script (fish passes the current
    token as COMP_CWORD, bash and zsh its index)."""
    env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=cword,
               _GIT_GASP_COMPLETE=f"{shell}_complete")
    proc = subprocess.run(["git-gasp"], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_no_shell_is_offered_a_hostile_id(hostile, shell):
    words = "git-gasp lineage goal_x"
    text = _protocol(hostile, shell, words, "goal_x" if shell == "fish" else "2")
    assert SAFE in text
    for gid in HOSTILE:
        assert gid not in text and "PWNED" not in text


@pytest.mark.slow  # over half a second: out of the fast loop
def test_bash_completing_and_accepting_the_line_runs_nothing(hostile):
    script = gasp(hostile, "completion", "bash").stdout.decode()
    probe = f"""{script}
COMP_WORDS=(git-gasp lineage goal_x); COMP_CWORD=2; COMPREPLY=()
_git_gasp_direct
for word in "${{COMPREPLY[@]}}"; do
    printf 'candidate:%s\\n' "$word"
    eval "git-gasp lineage $word" >/dev/null 2>&1   # Enter on the completed line
done
"""
    proc = subprocess.run(["bash", "--norc", "-c", probe], cwd=hostile, capture_output=True,
                          text=True)
    assert f"candidate:{SAFE}" in proc.stdout, proc.stdout + proc.stderr
    assert not list(hostile.glob("PWNED*")), proc.stdout


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completing_and_accepting_the_line_runs_nothing(hostile):
    script = gasp(hostile, "completion", "fish").stdout.decode()
    (hostile.parent / "gasp.fish").write_text(script)
    probe = (f"source {hostile.parent / 'gasp.fish'}\n"
             "for word in (complete -C 'git-gasp lineage goal_x')\n"
             "    set word (string split -m1 \\t $word)[1]\n"
             "    echo candidate:$word\n"
             "    eval \"git-gasp lineage $word\" >/dev/null 2>&1\n"
             "end\n")
    proc = subprocess.run(["fish", "-c", probe], cwd=hostile, capture_output=True, text=True)
    assert f"candidate:{SAFE}" in proc.stdout, proc.stdout + proc.stderr
    assert not list(hostile.glob("PWNED*")), proc.stdout


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completing_and_accepting_the_line_runs_nothing(hostile):
    """The script's own function, with compadd (a builtin of completion widgets only)
    standing in to print what it would insert; `-U` inserts the words unquoted."""
    script = gasp(hostile, "completion", "zsh").stdout.decode()
    (hostile.parent / "gasp.zsh").write_text(script)
    probe = f"""compdef() {{ : }}; zstyle() {{ : }}
compadd() {{ local arr=${{@[-1]}}; print -rl -- "${{(@P)arr}}" }}
source {hostile.parent / 'gasp.zsh'}
for word in "${{(@f)$(__git_gasp_ask 2 git-gasp lineage goal_x)}}"; do
    print -r -- "candidate:$word"
    eval "git-gasp lineage $word" >/dev/null 2>&1
done
"""
    proc = subprocess.run(["zsh", "-f", "-c", probe], cwd=hostile, capture_output=True,
                          text=True)
    assert f"candidate:{SAFE}" in proc.stdout, proc.stdout + proc.stderr
    assert not list(hostile.glob("PWNED*")), proc.stdout
