"""docs/json.md is the contract of every `--json`: each documented command is run and
its top-level keys (and the documented nested ones) must be exactly the page's keys,
optional ones allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.json_shapes import documented, keys_ok
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # one CLI run per shape

def run_json(repo: Path, *args: str):
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    text = proc.stdout.decode()
    if args[0] in ("log", "memory"):  # one object per line
        return [json.loads(x) for x in text.splitlines()]
    return json.loads(text)


def test_every_documented_shape_holds(agent, tmp_path):
    run = gasp(agent, "run", "start", "--task", "t").stdout.decode().strip()
    goal = gasp(agent, "record", "goal", "--title", "g").stdout.decode().strip()
    assert gasp(agent, "memory", "add", "a fact", "--from", run).returncode == 0
    keys_ok("git gasp run status --json", run_json(agent, "run", "status", "--json"))
    running = run_json(agent, "run", "status", "--json")["run"]
    assert set(running) == {"id", "task", "goal_id", "task_id", "status", "started_ts_ms",
                            "started_event"} and running["id"] == run
    for event in run_json(agent, "log", "--json"):
        keys_ok("git gasp log --json", event)
    for fact in run_json(agent, "memory", "list", "--json"):
        keys_ok("git gasp memory list --json", fact)
    keys_ok("git gasp lineage NODE --json", run_json(agent, "lineage", goal, "--json"))
    assert gasp(agent, "run", "finish", "--outcome", "ok").returncode == 0
    assert gasp(agent, "commit-run").returncode == 0
    report = run_json(agent, "check", "--json")
    keys_ok("git gasp check --json", report)
    assert {frozenset(c) for c in report["checks"]} == {
        frozenset({"number", "name", "passed", "failures", "notes"})}
    keys_ok("git gasp fold --json", run_json(agent, "fold", "--json"))
    first = run_json(agent, "log", "--json")[0]["id"]
    keys_ok("git gasp diff A B --json", run_json(agent, "diff", first, "HEAD", "--json"))
    assert run_json(agent, "run", "status", "--json") == {"run": None}

    restored = run_json(tmp_path, "restore", str(agent), str(tmp_path / "copy"), "--json")
    keys_ok("git gasp restore URL --json", restored)
    assert set(restored["identity"]) == {"files", "hash"}
    assert restored["agent_id"] == "tester" and restored["unfinished_run"] is None


def test_doctor_and_lease_shapes(agent):
    findings = json.loads(gasp(agent, "doctor", "--json").stdout)
    assert isinstance(findings, list) and findings
    for finding in findings:
        keys_ok("git gasp doctor --json", finding)
    assert run_json(agent, "lease", "status", "--json") == {"held": False}
    gasp(agent, "run", "start", "--task", "t")  # an open run keeps the lease
    held = run_json(agent, "lease", "status", "--json")
    keys_ok("git gasp lease status --json", held)
    assert held["held"] is True and held["pid"] == 0  # kept between commands


def test_status_shape(agent):
    assert gasp(agent, "record", "goal", "--title", "g").returncode == 0
    assert gasp(agent, "check").returncode == 0
    status = run_json(agent, "status", "--json")
    keys_ok("git gasp status --json", status)
    assert set(status["location"]) == {"kind", "branch", "path"}
    assert set(status["branch"]) == {"name", "upstream", "ahead", "behind"}
    assert set(status["uncommitted"]) == {"log", "events", "missing"}
    keys_ok("Counts", status["count"])
    view = run_json(agent, "view", "--json")
    keys_ok("git gasp view --json", view)
    assert view["count"] == status["count"]
    assert set(status["count"]["events"]) == {"all", "domain", "ops"}
    assert set(status["count"]["last_event"]) == {"id", "line", "kind", "layer", "short"}
    assert set(status["last_check"]) == {"head", "conformant", "failed", "ts_ms", "at_head",
                                     "changed_since"}
    for finding in status["wiring"]:
        keys_ok("git gasp doctor --json", finding)


def test_import_json_shape(agent):
    from tests.adapters.samples import CLAUDE_TRANSCRIPT

    first = run_json(agent, "import", "claude-code", str(CLAUDE_TRANSCRIPT), "--json")
    keys_ok("git gasp import AGENT FILE… --json", first)
    assert [f["status"] for f in first["files"]] == ["imported"]
    assert {"file", "status", "run_id", "events", "commit"} <= set(first["files"][0])
    again = run_json(agent, "import", "claude-code", str(CLAUDE_TRANSCRIPT), "--json")
    assert [f["status"] for f in again["files"]] == ["already"]
    assert git(agent, "status", "--porcelain") == ""


def test_every_json_option_is_documented():
    """A command given --json later must get a section here too."""
    import click

    from git_gasp.cli.group import cli

    ctx = click.Context(cli)
    titles = " ".join(documented())
    missing = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        subs = cmd.commands.items() if isinstance(cmd, click.Group) else [("", cmd)]
        for sub, c in subs:
            if sub and isinstance(c, click.Group):
                continue
            if any("--json" in getattr(p, "opts", []) for p in c.params):
                label = f"git gasp {name} {sub}".strip()
                if label not in titles and name not in ("record",):  # --json: its input
                    missing.append(label)
    assert not missing, f"docs/json.md lacks {missing}"
