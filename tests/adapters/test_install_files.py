"""Our hook entries in the agents' settings files: exact recognition, and nothing else
edited, reordered or reformatted (in-process; the CLI runs are in test_install_prime)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.adapters.payloads import HOOK_EVENTS
from git_gasp.adapters.wiring.agent_hooks import (
    AGENT_EVENTS,
    command_agent,
    hook_command,
    is_ours,
    merge_hooks,
)
from git_gasp.adapters.wiring.json_edit import apply_hooks
from tests.testing.run import git

PORTABLE = "git-gasp-hook claude-code"
OLD = "git gasp adapt hook --agent claude-code"  # what versions before git-gasp-hook installed

# A user's settings as people write them: 4-space indent, a one-line array, unicode,
# unknown keys, their own hooks (one of them calls ours inside a longer command).
USER_SETTINGS = """{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)", "Read"], "deny": []},
    "env": {"GREETING": "grüß dich"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}
        ],
        "Stop": [
            {
                "hooks": [
                    {"type": "command",
                     "command": "notify.sh && git gasp adapt hook --agent claude-code"}
                ]
            }
        ],
        "Notification": []
    },
    "statusLine": {"type": "command", "command": "echo hi"}
}
"""


@pytest.fixture
def project(tmp_path):
    git(tmp_path, "init", "-q")
    return tmp_path


def _write(project: Path, rel: str, text: str) -> Path:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("command", [
    "git-gasp-hook claude-code",
    "git-gasp-hook codex",
    "/opt/venv/bin/git-gasp-hook codex",
    "'/home/me/my venv/bin/git-gasp-hook' claude-code",
    "git gasp adapt hook --agent claude-code",
    "git-gasp adapt hook --agent codex",
    "/opt/venv/bin/git-gasp adapt hook --agent codex",
    "'/home/me/my venv/bin/git-gasp' adapt hook --agent claude-code",
    "'/old/venv/bin/git-gasp' adapt hook --agent codex",
    " git  gasp adapt hook --agent 'claude-code'",
])
def test_our_commands_are_recognised(command):
    assert command_agent(command) in ("claude-code", "codex")
    assert is_ours({"type": "command", "command": command, "timeout": 5})


@pytest.mark.parametrize("command", [
    "notify.sh && git gasp adapt hook --agent claude-code",
    "git gasp adapt hook --agent claude-code && notify.sh",
    "git gasp adapt hook --agent claude-code; echo done",
    "git gasp adapt hook --agent claude-code | tee log",
    "git gasp adapt hook --agent claude-code --repo ../other",
    "git gasp adapt hook --agent claude-code >/dev/null 2>&1",
    "env X=1 git gasp adapt hook --agent claude-code",
    "git gasp adapt hook",
    "git gasp adapt hook --agent aider",
    "git gasp adapt hook --agent claude-code\n",
    "git gasp adapt hook --agent\nclaude-code",
    "$HOME/bin/git-gasp adapt hook --agent codex",
    "/opt/*/git-gasp adapt hook --agent codex",
    "git gasp adapt hook --agent claude-code # mine",
    "git gasp adapt --agent claude-code hook",
    "bin/git-gasp adapt hook --agent codex",
    "/usr/bin/not-git-gasp adapt hook --agent codex",
    "'git gasp' adapt hook --agent codex",
    "git gasp adapt hook --agent 'claude-code",
    "git-gasp-hook",
    "git-gasp-hook aider",
    "git-gasp-hook claude-code ../other",
    "git-gasp-hook claude-code && notify.sh",
    "bin/git-gasp-hook codex",
    "git gasp-hook codex",
])
def test_anything_more_or_else_is_the_users(command):
    assert command_agent(command) is None
    assert not is_ours({"type": "command", "command": command})
    assert not is_ours({"type": "prompt", "command": PORTABLE})


def test_shared_files_name_the_command_portably():
    assert hook_command("codex") == "git-gasp-hook codex"
    absolute = hook_command("claude-code", absolute=True)
    assert os.path.isabs(absolute.split()[0].strip("'")) and command_agent(absolute)


def test_install_changes_only_what_it_adds_and_uninstall_gives_the_bytes_back(project):
    path = _write(project, ".claude/settings.json", USER_SETTINGS)
    result = merge_hooks(path, "claude-code", PORTABLE)
    assert result.changed and result.added == len(HOOK_EVENTS) and result.removed == 0
    text = path.read_text()
    data = json.loads(text)
    assert list(data) == list(json.loads(USER_SETTINGS))  # key order kept
    # every line of the user's file is still there, in order (a comma may follow)
    lines = iter(line.rstrip(",") for line in text.splitlines())
    assert all(any(line == mine.rstrip(",") for line in lines)
               for mine in USER_SETTINGS.splitlines())
    stop = data["hooks"]["Stop"]
    assert stop[0]["hooks"][0]["command"].startswith("notify.sh &&")
    assert stop[1] == {"hooks": [{"type": "command", "command": PORTABLE, "timeout": 60}]}
    assert data["hooks"]["Notification"] == []
    assert '\n    "model": "opus",\n' in text  # the file's own indentation
    again = merge_hooks(path, "claude-code", PORTABLE)
    assert not again.changed and path.read_text() == text
    gone = merge_hooks(path, None, None)
    assert gone.changed and gone.removed == len(HOOK_EVENTS)
    assert path.read_text() == USER_SETTINGS


def test_reinstall_replaces_an_old_absolute_install_in_place(project):
    old = "'/old/venv/bin/git-gasp' adapt hook --agent codex"
    hooks = {e: [{"hooks": [{"type": "command", "command": old, "timeout": 60}]}]
             for e in HOOK_EVENTS}
    hooks["Stop"].insert(0, {"hooks": [{"type": "command", "command": "say bye"}]})
    path = _write(project, ".codex/hooks.json", json.dumps({"hooks": hooks}, indent=2))
    result = merge_hooks(path, "codex", "git-gasp-hook codex")
    data = json.loads(path.read_text())
    assert result.changed and list(data["hooks"]) == [e for e in HOOK_EVENTS
                                                      if e != "PostToolUseFailure"]
    assert "/old/venv" not in path.read_text()
    assert data["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "say bye"}]}
    assert data["hooks"]["Stop"][1]["hooks"][0]["command"] == "git-gasp-hook codex"
    assert result.events == len(AGENT_EVENTS["codex"])
    assert "async" not in path.read_text()  # Codex runs every hook of ours synchronously


def test_install_upgrades_the_older_command_and_runs_pre_tool_use_async(project):
    """Entries an older version wrote (`git gasp adapt hook --agent …`) are replaced in
    place by `git-gasp-hook AGENT`; Claude Code's PreToolUse is async, the rest not; a
    second install changes nothing and uninstall removes them all."""
    hooks = {e: [{"hooks": [{"type": "command", "command": OLD, "timeout": 60}]}]
             for e in HOOK_EVENTS}
    hooks["Stop"].insert(0, {"hooks": [{"type": "command", "command": "say bye"}]})
    path = _write(project, ".claude/settings.json", json.dumps({"hooks": hooks}, indent=2))
    result = merge_hooks(path, "claude-code", PORTABLE)
    data = json.loads(path.read_text())
    assert result.changed and result.removed == len(HOOK_EVENTS) and OLD not in path.read_text()
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "say bye"
    ours = {e: x["hooks"] for e, entries in data["hooks"].items() for x in entries
            if is_ours(x["hooks"][0])}
    assert {e: h[0]["command"] for e, h in ours.items()} == dict.fromkeys(HOOK_EVENTS, PORTABLE)
    assert [e for e, h in ours.items() if h[0].get("async")] == ["PreToolUse"]
    assert not merge_hooks(path, "claude-code", PORTABLE).changed
    assert merge_hooks(path, None, None).removed == len(HOOK_EVENTS)


def test_a_tweaked_timeout_of_ours_is_kept_and_duplicates_go(project):
    mine = {"type": "command", "command": PORTABLE, "timeout": 120}
    hooks = {"Stop": [{"hooks": [mine]}, {"hooks": [dict(mine, timeout=60)]}]}
    path = _write(project, ".claude/settings.json", json.dumps({"hooks": hooks}))
    merge_hooks(path, "claude-code", PORTABLE)
    data = json.loads(path.read_text())
    assert data["hooks"]["Stop"] == [{"hooks": [mine]}]
    assert sum(is_ours(h) for e in data["hooks"].values() for x in e for h in x["hooks"]) \
        == len(HOOK_EVENTS)


def test_uninstall_without_our_hooks_writes_nothing(project):
    path = _write(project, ".claude/settings.json", USER_SETTINGS)
    before = os.stat(path).st_mtime_ns
    assert not merge_hooks(path, None, None).changed
    assert os.stat(path).st_mtime_ns == before and path.read_text() == USER_SETTINGS
    missing = project / ".codex" / "hooks.json"
    assert not merge_hooks(missing, None, None).changed and not missing.exists()


def test_a_compact_crlf_file_keeps_its_style(project):
    text = '{"model":"opus","hooks":{"Notification":[]}}\r\n'
    path = _write(project, ".claude/settings.json", text)
    merge_hooks(path, "claude-code", PORTABLE)
    written = path.read_bytes().decode()
    assert written.startswith('{"model":"opus","hooks":{"Notification":[],"SessionStart":[{')
    assert "\n" not in written.rstrip("\r\n") and written.endswith("}\r\n")
    merge_hooks(path, None, None)
    assert path.read_bytes().decode() == text


def test_new_file_and_written_through_a_link(project):
    target = _write(project, "conf/claude.json", "{\n\t\"model\": \"opus\"\n}\n")
    link = project / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(Path("..", "conf", "claude.json"))
    merge_hooks(link, "claude-code", PORTABLE)
    assert link.is_symlink() and os.readlink(link) == str(Path("..", "conf", "claude.json"))
    assert '\n\t"hooks": {\n\t\t"SessionStart": [' in target.read_text()
    merge_hooks(link, None, None)
    assert target.read_text() == "{\n\t\"model\": \"opus\"\n}\n" and link.is_symlink()
    assert sorted(p.name for p in target.parent.iterdir()) == ["claude.json"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text("aé\"\\ {}[],:", max_size=4),
    lambda kids: st.lists(kids, max_size=3)
    | st.dictionaries(st.text("abc", max_size=3), kids, max_size=3),
    max_leaves=8)
_hook = st.builds(lambda c: {"type": "command", "command": c},
                  st.sampled_from(["lint.sh", PORTABLE, "notify.sh && " + PORTABLE,
                                   "'/v/bin/git-gasp' adapt hook --agent claude-code"]))
_entry = st.fixed_dictionaries({"hooks": st.lists(_hook, max_size=3)},
                               optional={"matcher": st.sampled_from(["*", "Bash"])})
_hooks = st.dictionaries(st.sampled_from([*HOOK_EVENTS, "Notification"]),
                         st.lists(_entry, max_size=3), max_size=4)


@pytest.mark.slow
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(other=st.dictionaries(st.sampled_from(["model", "env", "x"]), _json, max_size=3),
       hooks=st.none() | _hooks, indent=st.sampled_from([None, 2, 4, "\t"]))
def test_install_twice_is_stable_and_keeps_everything_else(project, other, hooks, indent):
    data = dict(other)
    if hooks is not None:
        data["hooks"] = hooks
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    path = _write(project, ".claude/settings.json", text)
    merge_hooks(path, "claude-code", PORTABLE)
    once = path.read_bytes()
    merge_hooks(path, "claude-code", PORTABLE)
    assert path.read_bytes() == once
    got = json.loads(once)
    assert {k: v for k, v in got.items() if k != "hooks"} == other
    assert list(got) == list(data) + ([] if hooks is not None else ["hooks"])
    for event, entries in got["hooks"].items():
        foreign = [h for e in entries for h in e["hooks"] if not is_ours(h)]
        before = [h for e in (hooks or {}).get(event, []) for h in e["hooks"] if not is_ours(h)]
        assert foreign == before
        assert sum(is_ours(h) for e in entries for h in e["hooks"]) == (event in HOOK_EVENTS)
    merge_hooks(path, None, None)
    left = json.loads(path.read_bytes())
    assert all(not is_ours(h) for entries in left.get("hooks", {}).values()
               for e in entries for h in e["hooks"])
    ours_before = any(is_ours(h) for entries in (hooks or {}).values()
                      for e in entries for h in e["hooks"])
    lossy = hooks == {} or any(not (hooks or {}).get(e, True) for e in HOOK_EVENTS) \
        or not data  # an empty list or object of the user's that ours filled
    if not ours_before and not lossy:
        assert path.read_text() == text  # install + uninstall: the file it started from


def test_apply_hooks_on_an_empty_file():
    assert json.loads(apply_hooks("", {"Stop": []})) == {"hooks": {"Stop": []}}
    assert apply_hooks("  \n", None) == "{}\n"


def test_a_linked_codex_hooks_json_is_written_at_its_target(project):
    target = _write(project, "shared/codex-hooks.json", '{"hooks": {}}\n')
    link = project / ".codex" / "hooks.json"
    link.parent.mkdir()
    link.symlink_to(target)  # an absolute link inside the work tree
    result = merge_hooks(link, "codex", "git gasp adapt hook --agent codex")
    assert result.changed and link.is_symlink() and os.readlink(link) == str(target)
    assert result.events == len(AGENT_EVENTS["codex"])
    assert list(json.loads(target.read_text())["hooks"]) == list(AGENT_EVENTS["codex"])


def test_an_absolute_path_we_could_not_recognise_is_refused(monkeypatch, tmp_path):
    from git_gasp.adapters.wiring import agent_hooks as install
    from git_gasp.base.errors import GaspError

    odd = tmp_path / "v (1)" / "git-gasp-hook"
    monkeypatch.setattr(install, "this_git_gasp", lambda program: str(odd))
    with pytest.raises(GaspError, match="treats specially"):
        hook_command("claude-code", absolute=True)


def test_the_local_file_is_kept_out_of_commits_once(project):
    from git_gasp.adapters.wiring.agent_hooks import keep_local_untracked

    said = keep_local_untracked(project)
    assert said is not None and said.startswith("added .claude/settings.local.json to ")
    exclude = project / ".git" / "info" / "exclude"
    assert exclude.read_text().splitlines()[-1] == "/.claude/settings.local.json"
    assert keep_local_untracked(project) is None  # ignored now: nothing more
    assert git(project, "check-ignore", ".claude/settings.local.json").strip()
    exclude.write_text("")
    _write(project, ".claude/settings.local.json", "{}")
    git(project, "add", "-f", ".claude/settings.local.json")
    said = keep_local_untracked(project)
    assert said is not None and "tracked by git" in said and exclude.read_text() == ""
