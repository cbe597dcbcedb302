"""The GitHub Action (action.yml at the repository's root) run as a script: each `run:`
step with bash, in a clone of a project whose `gasp/state` is on its origin, with the
variables GitHub sets for a pull request. Two stand-ins, said here: the install step is
skipped (the test's environment has git-gasp installed already: the step only pip
installs it) and `actions/setup-python` is not run (this Python is the one); `gh` is a
script on PATH that records what it was asked to post."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.testing.paths import REPO_ROOT
from tests.testing.run import gasp, git, out
from tests.testing.stats_history import Project, build_isolated

pytestmark = pytest.mark.slow  # a project, a clone and six steps (~4 s)

INSTALL = "Install git-gasp"  # replaced by the test venv's git-gasp (module doc)
EXPR = re.compile(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}")


def steps() -> list[dict]:
    return yaml.safe_load((REPO_ROOT / "action.yml").read_text())["runs"]["steps"]


def _inputs(**given: str) -> dict[str, str]:
    spec = yaml.safe_load((REPO_ROOT / "action.yml").read_text())["inputs"]
    return {name: given.get(name.replace("-", "_"), str(v.get("default", "")))
            for name, v in spec.items()}


def run_action(workspace: Path, env: dict[str, str], inputs: dict[str, str]) -> list[str]:
    """Run each `run:` step as GitHub would (bash, in the workspace, its `env:` with the
    inputs filled in); the names of the steps run."""
    ran = []
    for step in steps():
        if "run" not in step or step.get("name") == INSTALL:
            continue
        assert step.get("shell") == "bash" and "if" not in step
        step_env = {k: EXPR.sub(lambda m: inputs[m.group(1)], str(v))
                    for k, v in (step.get("env") or {}).items()}
        proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workspace,
                              env={**env, **step_env}, capture_output=True)
        assert proc.returncode == 0, (step["name"], out(proc))
        ran.append(step["name"])
    return ran


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> Project:
    p = build_isolated(tmp_path_factory, "action")
    git(p.repo, "branch", "base", p.base)  # the pull request's base branch
    return p


def _github(tmp: Path, p: Project, *depth: str) -> tuple[Path, dict[str, str]]:
    """A clone of `p` (actions/checkout's default: one commit deep) and the variables
    GitHub sets for a pull request from `main` to `base`."""
    ws = tmp / "ws"
    git(tmp, "clone", "-q", "--no-local", *(depth or ("--depth", "1")), "--branch", "main",
        f"file://{p.repo}", str(ws))
    runner = tmp / "runner"
    runner.mkdir()
    (runner / "bin").mkdir()
    gh = runner / "bin" / "gh"
    gh.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$RUNNER_TEMP/gh-args"\n')
    gh.chmod(0o755)
    env = {**os.environ, "GITHUB_ACTIONS": "true", "CI": "true",
           "GITHUB_WORKSPACE": str(ws), "GITHUB_SHA": p.tip,
           "GITHUB_REF": "refs/pull/7/merge", "GITHUB_BASE_REF": "base",
           "GITHUB_HEAD_REF": "main", "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_REPOSITORY": "acme/proj", "RUNNER_TEMP": str(runner),
           "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
           "PATH": f"{runner / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    return ws, env


def test_the_actions_steps_put_the_report_in_the_step_summary(origin, tmp_path):
    ws, env = _github(tmp_path, origin)
    ran = run_action(ws, env, _inputs())
    assert ran == ["Fetch the agent's state", "Check the agent's state", "Report",
                   "Comment on the pull request"]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith(f"### git gasp report: {origin.base[:12]}..{origin.tip[:12]}")
    assert "5 commits, 3 explained by the agent's patches, from 2 runs." in summary
    assert "15 lines: 10 agent (66.7%), 5 human (33.3%)" in summary
    assert "| Failed | ruff |" in summary and "| Rejected | lint fails |" in summary
    assert summary.index("| Failed |") < summary.index("| Passed |")
    assert "http" not in summary  # link-free
    assert not (Path(env["RUNNER_TEMP"]) / "gh-args").exists()  # no token: no comment


def test_with_a_token_it_comments_on_the_pull_request(origin, tmp_path):
    ws, env = _github(tmp_path, origin)
    run_action(ws, env, _inputs(token="t0ken", base=origin.base, head="HEAD"))
    args = (Path(env["RUNNER_TEMP"]) / "gh-args").read_text().splitlines()
    report = Path(env["RUNNER_TEMP"]) / "gasp-report.md"
    assert args == ["pr", "comment", "7", "--repo", "acme/proj", "--body-file", str(report)]
    assert report.read_text() == Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def _gitlab_job() -> dict:
    text = (REPO_ROOT / "docs/ci-report.md").read_text()
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "gasp-report:" in b]
    return yaml.safe_load(block)["gasp-report"]


def test_the_gitlab_job_writes_the_report_and_posts_the_note(origin, tmp_path):
    """The GitLab job's script, line by line under bash as the runner runs it (its
    `pip install` skipped: git-gasp is installed here), with GitLab's merge request
    variables; `curl` is a script recording its arguments."""
    job = _gitlab_job()
    assert job["variables"]["GIT_DEPTH"] == 0
    ws, env = _github(tmp_path, origin, "--no-single-branch")  # GIT_DEPTH 0: whole
    curl = Path(env["RUNNER_TEMP"]) / "bin" / "curl"
    curl.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$RUNNER_TEMP/curl-args"\n')
    curl.chmod(0o755)
    env.update(CI_MERGE_REQUEST_DIFF_BASE_SHA=origin.base, CI_COMMIT_SHA=origin.tip,
               CI_MERGE_REQUEST_TARGET_BRANCH_NAME="base", CI_PROJECT_DIR=str(ws),
               CI_API_V4_URL="https://gitlab.example/api/v4", CI_PROJECT_ID="12",
               CI_MERGE_REQUEST_IID="3", GASP_GITLAB_TOKEN="t0ken")
    script = [line for line in job["script"] if not line.startswith("pip install")]
    assert len(script) == len(job["script"]) - 1
    for line in script:
        proc = subprocess.run(["bash", "-e", "-c", line], cwd=ws, env=env, capture_output=True)
        assert proc.returncode == 0, (line, out(proc))
    report = (ws / "gasp-report.md").read_text()
    assert report.startswith(f"### git gasp report: {origin.base[:12]}..")
    assert "| Failed | ruff |" in report
    args = (Path(env["RUNNER_TEMP"]) / "curl-args").read_text().splitlines()
    assert "PRIVATE-TOKEN: t0ken" in args and "body@gasp-report.md" in args
    assert args[-1] == "https://gitlab.example/api/v4/projects/12/merge_requests/3/notes"


def test_a_shallow_clone_is_said_and_unshallowed_it_is_not(origin, tmp_path):
    """stats and report in a one-commit-deep clone (the action unshallows its own):
    blame gives the cut history's lines to the boundary commit, so a note says so."""
    ws, env = _github(tmp_path, origin)
    state = "+refs/heads/gasp/state:refs/remotes/origin/gasp/state"
    git(ws, "config", "--add", "remote.origin.fetch", state)
    git(ws, "fetch", "-q", "origin", state)
    joined = gasp(ws, "init", "--branch")
    assert joined.returncode == 0, out(joined)
    for args in (("stats",), ("report", "HEAD~0..HEAD")):
        proc = gasp(ws, *args)
        assert proc.returncode == 0, out(proc)
        assert proc.stderr.decode().count("note: a shallow clone") == 1, out(proc)
    git(ws, "fetch", "-q", "--unshallow", "origin")
    proc = gasp(ws, "stats")
    assert proc.returncode == 0 and b"shallow" not in proc.stderr, out(proc)
