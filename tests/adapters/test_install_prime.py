"""`git gasp adapt … install` (merge, idempotent, uninstall only ours) and `adapt … prime`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.adapters.payloads import HOOK_EVENTS
from git_gasp.adapters.prime import BEGIN, END
from git_gasp.adapters.wiring.agent_hooks import AGENT_EVENTS, is_ours
from tests.adapters.samples import CLAUDE_TRANSCRIPT
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # the CLI per install, uninstall and prime

FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


@pytest.fixture
def agent_repo(tmp_path):
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    return tmp_path / "bot"


def _ours(settings: dict) -> dict[str, int]:
    return {event: sum(is_ours(h) for e in entries for h in e.get("hooks", []))
            for event, entries in settings.get("hooks", {}).items()}


def test_claude_install_merges_is_idempotent_and_uninstalls_only_ours(agent_repo):
    path = agent_repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(FOREIGN, indent=4))
    proc = gasp(agent_repo, "adapt", "claude-code", "install")
    assert proc.returncode == 0 and "installed" in out(proc), out(proc)
    settings = json.loads(path.read_text())
    assert {e: n for e, n in _ours(settings).items() if n} == {e: 1 for e in HOOK_EVENTS}
    assert settings["model"] == "opus" and settings["permissions"] == FOREIGN["permissions"]
    assert settings["hooks"]["PreToolUse"][0] == FOREIGN["hooks"]["PreToolUse"][0]
    assert settings["hooks"]["Notification"] == FOREIGN["hooks"]["Notification"]
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command == "git-gasp-hook claude-code"
    assert settings["hooks"]["PostToolUse"][0]["matcher"] == "*"
    written = path.read_bytes()
    again = gasp(agent_repo, "adapt", "claude-code", "install")
    assert again.returncode == 0 and "nothing changed" in out(again)
    assert path.read_bytes() == written
    gone = gasp(agent_repo, "adapt", "claude-code", "install", "--uninstall")
    assert gone.returncode == 0 and f"removed {len(HOOK_EVENTS)}" in out(gone), out(gone)
    assert json.loads(path.read_text()) == FOREIGN


def test_uninstall_keeps_foreign_hooks_sharing_an_entry_with_ours(agent_repo):
    path = agent_repo / ".claude" / "settings.json"
    path.parent.mkdir()
    assert gasp(agent_repo, "adapt", "claude-code", "install").returncode == 0
    settings = json.loads(path.read_text())
    settings["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "say done"})
    path.write_text(json.dumps(settings))
    assert gasp(agent_repo, "adapt", "claude-code", "install", "--uninstall").returncode == 0
    left = json.loads(path.read_text())
    assert left == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}


def test_invalid_settings_are_refused_in_one_line_and_left_untouched(agent_repo):
    path = agent_repo / ".claude" / "settings.json"
    path.parent.mkdir()
    for bad in ('{"hooks": {', '{"hooks": {"Stop": {"x": 1}}}', "[]"):
        path.write_text(bad)
        proc = gasp(agent_repo, "adapt", "claude-code", "install")
        assert proc.returncode == 1, out(proc)
        assert len(out(proc).strip().splitlines()) == 1 and "Traceback" not in out(proc)
        assert "untouched" in out(proc) and path.read_text() == bad
    assert not [p for p in path.parent.iterdir() if p.name != "settings.json"]


def test_user_scope_writes_the_home_settings(agent_repo, hermetic):
    proc = gasp(agent_repo, "adapt", "claude-code", "install", "--scope", "user")
    assert proc.returncode == 0, out(proc)
    settings = json.loads((hermetic / ".claude" / "settings.json").read_text())
    assert sum(_ours(settings).values()) == len(HOOK_EVENTS)
    assert not (agent_repo / ".claude").exists()


def test_a_settings_link_inside_the_repo_is_kept_and_its_target_written(agent_repo):
    target = agent_repo / "config" / "claude-settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps(FOREIGN))
    link = agent_repo / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(Path("..", "config", "claude-settings.json"))
    proc = gasp(agent_repo, "adapt", "claude-code", "install")
    assert proc.returncode == 0 and "installed" in out(proc), out(proc)
    assert link.is_symlink() and os.readlink(link) == str(Path("..", "config",
                                                               "claude-settings.json"))
    settings = json.loads(target.read_text())
    assert sum(_ours(settings).values()) == len(HOOK_EVENTS)
    assert settings["model"] == "opus"
    assert sorted(p.name for p in target.parent.iterdir()) == ["claude-settings.json"]


def test_a_settings_link_out_of_the_repo_is_refused_in_one_line(agent_repo, tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(FOREIGN))
    link = agent_repo / ".codex" / "hooks.json"
    link.parent.mkdir()
    link.symlink_to(outside)
    for args in (("codex", "install"), ("claude-code", "install")):
        if args[0] == "claude-code":
            link = agent_repo / ".claude" / "settings.json"
            link.parent.mkdir()
            link.symlink_to(outside)
        proc = gasp(agent_repo, "adapt", *args)
        assert proc.returncode == 1, out(proc)
        text = out(proc).strip()
        assert len(text.splitlines()) == 1 and "Traceback" not in text, text
        assert "link" in text and "refusing" in text, text
        assert link.is_symlink() and json.loads(outside.read_text()) == FOREIGN
        assert [p.name for p in link.parent.iterdir()] == [link.name]


def test_a_user_settings_link_may_lead_inside_home_only(agent_repo, hermetic, tmp_path):
    dotfiles = hermetic / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text("{}")
    link = hermetic / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    proc = gasp(agent_repo, "adapt", "claude-code", "install", "--scope", "user")
    assert proc.returncode == 0, out(proc)
    assert link.is_symlink()
    assert sum(_ours(json.loads(dotfiles.read_text())).values()) == len(HOOK_EVENTS)
    outside = tmp_path / "not-home.json"
    outside.write_text("{}")
    link.unlink()
    link.symlink_to(outside)
    proc = gasp(agent_repo, "adapt", "claude-code", "install", "--scope", "user")
    assert proc.returncode == 1 and len(out(proc).strip().splitlines()) == 1, out(proc)
    assert link.is_symlink() and outside.read_text() == "{}"


def test_codex_install_writes_hooks_json_and_says_how_to_trust(agent_repo, hermetic):
    proc = gasp(agent_repo, "adapt", "codex", "install")
    assert proc.returncode == 0, out(proc)
    hooks = json.loads((agent_repo / ".codex" / "hooks.json").read_text())
    assert sum(_ours(hooks).values()) == len(AGENT_EVENTS["codex"])
    assert "PostToolUseFailure" not in hooks["hooks"]  # Codex documents no such event
    key = f"[projects.{json.dumps(str(agent_repo.resolve()))}]"
    assert key in out(proc) and 'trust_level = "trusted"' in out(proc)
    assert "--dangerously-bypass-hook-trust" in out(proc)
    (hermetic / ".codex").mkdir()
    (hermetic / ".codex" / "config.toml").write_text(f'{key}\ntrust_level = "trusted"\n')
    again = gasp(agent_repo, "adapt", "codex", "install")
    assert "Codex trusts this project" in out(again) and "nothing changed" in out(again)
    assert gasp(agent_repo, "adapt", "codex", "install", "--uninstall").returncode == 0
    assert json.loads((agent_repo / ".codex" / "hooks.json").read_text()) == {}


def test_install_outside_an_agent_repo_says_hooks_record_nothing(tmp_path):
    proc = gasp(tmp_path, "adapt", "claude-code", "install")
    assert proc.returncode == 0 and "git gasp init" in out(proc)


def test_prime_writes_identity_and_primer_between_markers(agent_repo):
    (agent_repo / "identity").mkdir(exist_ok=True)
    (agent_repo / "identity" / "IDENTITY.md").write_text("I am bot, a careful fixer.\n")
    assert gasp(agent_repo, "import", "claude-code", str(CLAUDE_TRANSCRIPT)).returncode == 0
    # an open goal of our own, and a superseded fact: only the latest shows
    events = [json.loads(line) for line in (agent_repo / "state/events.jsonl").read_text()
              .splitlines()]
    source = events[-1]["id"]
    goal = gasp(agent_repo, "record", "goal", "--title", "Keep calc tested")
    assert goal.returncode == 0, out(goal)
    fact = gasp(agent_repo, "memory", "add", "tests live in test_calc.py", "--from", source)
    assert fact.returncode == 0, out(fact)
    old = fact.stdout.decode().strip()
    proc = gasp(agent_repo, "memory", "supersede", old, "tests live in tests/", "--from", source)
    assert proc.returncode == 0, out(proc)
    claude_md = agent_repo / "CLAUDE.md"
    claude_md.write_text("# House rules\n\nUse tabs.\n")
    proc = gasp(agent_repo, "adapt", "claude-code", "prime")
    assert proc.returncode == 0 and "wrote" in out(proc), out(proc)
    text = claude_md.read_text()
    assert text.startswith("# House rules\n\nUse tabs.\n\n" + BEGIN)
    assert text.endswith(END + "\n")
    body = text.split(BEGIN, 1)[1]
    assert "I am bot, a careful fixer." in body and "agent `bot`" in body
    assert "Keep calc tested" in body  # the open goal
    # the session's own goal ended Achieved with its promoted fix: not an open goal
    assert "Fix the add function so the test passes, then commit" not in body
    assert "Approved on patch “Fix add”" in body
    assert "tests live in tests/" in body and "test_calc.py" not in body.split("Live facts")[1]
    again = gasp(agent_repo, "adapt", "claude-code", "prime")
    assert "up to date" in out(again) and claude_md.read_text() == text
    # regenerated in place; what surrounds the section is kept
    claude_md.write_text("top\n" + text.replace("Use tabs.", "Use spaces.") + "after\n")
    assert gasp(agent_repo, "adapt", "claude-code", "prime").returncode == 0
    redone = claude_md.read_text()
    assert redone.startswith("top\n# House rules") and redone.endswith(END + "\nafter\n")
    assert redone.count(BEGIN) == 1 and "Use spaces." in redone


def test_codex_prime_writes_agents_md_and_repairs_broken_markers(agent_repo):
    proc = gasp(agent_repo, "adapt", "codex", "prime")
    assert proc.returncode == 0, out(proc)
    section = (agent_repo / "AGENTS.md").read_text()
    assert section.startswith(BEGIN) and "Open goals:" in section and "- none" in section
    (agent_repo / "AGENTS.md").write_text(f"mine\n{BEGIN}\nhalf\n")
    proc = gasp(agent_repo, "adapt", "codex", "prime")
    assert proc.returncode == 0, out(proc)
    assert (agent_repo / "AGENTS.md").read_text() == "mine\n" + section + "half\n"
    assert not [p for p in os.listdir(agent_repo) if p.startswith(".AGENTS")]


def test_a_goal_title_holding_a_marker_does_not_grow_the_file(agent_repo):
    from git_gasp.runtime import AgentState

    with AgentState.open(agent_repo, "tester") as state:
        state.record_goal(f"ship {END} more", f"and {BEGIN} too")
    claude_md = agent_repo / "CLAUDE.md"
    claude_md.write_text("# mine\n")
    sizes = []
    for _ in range(3):
        assert gasp(agent_repo, "adapt", "claude-code", "prime").returncode == 0
        sizes.append(claude_md.read_bytes())
    assert sizes[0] == sizes[1] == sizes[2]
    text = sizes[0].decode()
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and text.startswith("# mine\n")
    assert "ship <\\!-- gasp:end --> more" in text


def test_prime_writes_through_a_link_only_inside_the_repo(agent_repo, tmp_path):
    inside = agent_repo / "docs" / "claude.md"
    inside.parent.mkdir()
    inside.write_text("# mine\n")
    link = agent_repo / "CLAUDE.md"
    link.symlink_to(Path("docs", "claude.md"))
    proc = gasp(agent_repo, "adapt", "claude-code", "prime")
    assert proc.returncode == 0, out(proc)
    assert link.is_symlink() and inside.read_text().startswith("# mine\n") and BEGIN in \
        inside.read_text()
    outside = tmp_path / "outside.md"
    outside.write_text("# theirs\n")
    link.unlink()
    link.symlink_to(outside)
    proc = gasp(agent_repo, "adapt", "claude-code", "prime")
    assert proc.returncode == 1 and len(out(proc).strip().splitlines()) == 1, out(proc)
    assert link.is_symlink() and outside.read_text() == "# theirs\n"


def test_prime_outside_an_agent_repo_is_one_line(tmp_path):
    proc = gasp(tmp_path, "adapt", "claude-code", "prime")
    assert proc.returncode == 1 and "git gasp init" in out(proc)
    assert len(out(proc).strip().splitlines()) == 1


def test_shared_files_name_git_gasp_through_path_never_this_venv(agent_repo):
    assert gasp(agent_repo, "adapt", "claude-code", "install").returncode == 0
    assert gasp(agent_repo, "adapt", "codex", "install").returncode == 0
    venv = str(Path(sys.executable).parent)
    for rel, agent in ((".claude/settings.json", "claude-code"), (".codex/hooks.json", "codex")):
        text = (agent_repo / rel).read_text()
        assert venv not in text and sys.prefix not in text, text
        commands = {h["command"] for entries in json.loads(text)["hooks"].values()
                    for e in entries for h in e["hooks"]}
        assert commands == {f"git-gasp-hook {agent}"}


def test_a_missing_git_gasp_on_path_is_said(agent_repo, monkeypatch):
    exe = Path(sys.executable).with_name("git-gasp")  # git-gasp-hook is beside it
    monkeypatch.setenv("PATH", os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != exe.parent))
    proc = subprocess.run([str(exe), "adapt", "claude-code", "install"], cwd=agent_repo,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "not on PATH" in proc.stderr and str(exe.parent) in proc.stderr
    assert "--scope local" in proc.stderr


def test_local_scope_names_this_git_gasp_and_stays_out_of_commits(agent_repo):
    shared = agent_repo / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps(FOREIGN, indent=2) + "\n")
    before = shared.read_bytes()
    proc = gasp(agent_repo, "adapt", "claude-code", "install", "--scope", "local")
    assert proc.returncode == 0 and "info/exclude" in out(proc), out(proc)
    local = agent_repo / ".claude" / "settings.local.json"
    commands = {h["command"] for entries in json.loads(local.read_text())["hooks"].values()
                for e in entries for h in e["hooks"]}
    (command,) = commands
    assert command.startswith(str(Path(sys.executable).parent)) and \
        command.endswith("/git-gasp-hook claude-code")
    assert shared.read_bytes() == before
    assert ".claude/settings.local.json" not in git(agent_repo, "status", "--porcelain")
    exclude = agent_repo / ".git" / "info" / "exclude"
    text = exclude.read_text()
    again = gasp(agent_repo, "adapt", "claude-code", "install", "--scope", "local")
    assert "nothing changed" in out(again) and exclude.read_text() == text
    both = gasp(agent_repo, "adapt", "claude-code", "install")
    assert "recorded twice" in out(both), out(both)
    assert gasp(agent_repo, "adapt", "claude-code", "install", "--scope", "local",
                "--uninstall").returncode == 0
    assert json.loads(local.read_text()) == {}


def test_a_users_command_calling_ours_survives_install_and_uninstall(agent_repo):
    mine = "notify.sh && git gasp adapt hook --agent claude-code"
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": mine}]}]}}
    path = agent_repo / ".claude" / "settings.json"
    path.parent.mkdir()
    text = json.dumps(settings, indent=4) + "\n"
    path.write_text(text)
    assert gasp(agent_repo, "adapt", "claude-code", "install").returncode == 0
    assert json.loads(path.read_text())["hooks"]["Stop"][0] == settings["hooks"]["Stop"][0]
    proc = gasp(agent_repo, "adapt", "claude-code", "install", "--uninstall")
    assert proc.returncode == 0 and f"removed {len(HOOK_EVENTS)}" in out(proc), out(proc)
    assert path.read_text() == text


def test_codex_reinstall_drops_the_undocumented_event_of_an_old_install(agent_repo):
    old = f"{shlex.quote(str(agent_repo / 'venv' / 'bin' / 'git-gasp'))} adapt hook --agent codex"
    hooks = {e: [{"hooks": [{"type": "command", "command": old, "timeout": 60}]}]
             for e in HOOK_EVENTS}
    path = agent_repo / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": hooks}, indent=2) + "\n")
    proc = gasp(agent_repo, "adapt", "codex", "install")
    assert proc.returncode == 0 and f"for {len(AGENT_EVENTS['codex'])} events" in out(proc)
    data = json.loads(path.read_text())
    assert list(data["hooks"]) == list(AGENT_EVENTS["codex"])
    assert "venv" not in path.read_text()
