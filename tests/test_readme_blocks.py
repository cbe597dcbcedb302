"""Every fenced code block of README.md is executed by a test: here, or by the test its
marker names.

The rule, block by block (`tests/testing/readme.py` finds them):

- A block carrying `<!-- tested-by: tests/PATH.py::NAME -->` (the last non-blank line
  before its fence) is one CI cannot run as written (the whole suite, pipx from the
  network, a framework's agent, a CI service's YAML). NAME must be a test function of
  PATH that fetches the block itself with `marked_blocks()` (which returns the blocks
  marked with its caller's name), so the marker cannot name a test that ignores it.
- Every other block is run or compared here, in README order, as a reader following
  the README would, by the one `Plan` whose `key` only that block holds:
  `sh` blocks run under `bash -e` in a fresh clone of this checkout (`git clone` of
  its committed HEAD), with an isolated HOME (the suite's: GIT_CONFIG_NOSYSTEM=1, the
  git identity set by environment) and the `git gasp` the Quick start installed into
  the clone's `.venv` first on PATH; `python` blocks run as scripts with that venv's
  python; `json`, `yaml`, `toml` and unlabelled blocks are compared with what the
  program prints or reads. A plan may run shell first (`before`: what the README
  assumes exists, e.g. your project) and replace text the README names but CI cannot
  reach (`substitute`: the GitHub remote, the Claude Code session, the collector); each
  says why, and a substitution that no longer matches fails.
- A block with neither a marker nor a plan fails `test_every_block_is_run_or_marked`,
  naming its README line.
"""

from __future__ import annotations

import ast
import http.server
import json
import os
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.testing.paths import REPO_ROOT
from tests.testing.readme import Block, blocks, marked_blocks
from tests.testing.run import git

pytestmark = pytest.mark.slow  # installs the package into a fresh venv, as the README does

# What `pip install .` may bring: git-gasp, its dependencies and theirs (never an extra).
BASE_INSTALL = {"git-gasp", "dulwich", "urllib3", "click", "pyyaml", "orjson", "tomli",
                "tomli-w", "typing-extensions", "pip", "setuptools", "wheel",
                "git-filter-repo"}  # `git gasp forget` rewrites history with it
CLAUDE_SESSION = REPO_ROOT / "tests/adapters/data/claude-code-2.1.328/session-transcript.jsonl"
OTEL_INPUT = REPO_ROOT / "tests/otel/data/otel-langchain-openinference.jsonl"
KG_DOC = """summary: what the README's kg example saves
entities:
  - label: LLM Evaluation
    type: domain
    body: "How models are evaluated."
"""


@dataclass
class Ran:
    """What a block did: its output and the directories it ran in."""

    stdout: str
    clone: Path
    cwd: Path
    home: Path
    extra: dict = field(default_factory=dict)


@dataclass
class Plan:
    """How one unmarked block is run (`key`: text only that block holds)."""

    key: str
    cwd: str = "clone"  # "clone", or a directory beside it (made empty on first use)
    before: str = ""  # shell run first, in cwd: what the README assumes exists
    prepare: Callable[[Path], None] | None = None  # files written first, in cwd
    substitute: tuple[tuple[str, str], ...] = ()  # (as written, as run), each with why
    check: Callable[[Ran], None] | None = None  # what the block must have done
    compare: Callable[[Block, Ran], None] | None = None  # for blocks that are not run


# --- checks --------------------------------------------------------------------------


def _quick_start(ran: Ran) -> None:
    assert "fixture: conformant" in ran.stdout, ran.stdout
    freeze = subprocess.run([str(ran.clone / ".venv/bin/pip"), "list", "--format=freeze"],
                            capture_output=True, text=True, check=True).stdout
    names = {line.split("==")[0].lower().replace("_", "-") for line in freeze.split()}
    assert names <= BASE_INSTALL, f"the Quick start installed more: {names - BASE_INSTALL}"


def _beside_project(ran: Ran) -> None:
    project = ran.cwd / "your-project"
    assert git(project, "log", "--format=%s", "main").split("\n")[0] == "the project"
    assert git(project, "ls-files").split() == ["app.py"]  # no file from git-gasp
    assert git(project, "rev-parse", "--verify", "gasp/state").strip()
    assert (project / ".claude/settings.local.json").is_file()
    assert git(ran.cwd, "config", "--global", "merge.gasp.driver").strip()


# The first person's project beside, its state shared through a bare remote (../shared.git,
# as the README names it): what the team steps assume exists.
TEAM_BEFORE = """
git init -q --bare -b main ../shared.git
git init -q -b main ../alice && cd ../alice && echo 'print(1)' > app.py && git add app.py
git commit -qm 'the project' && git remote add origin ../shared.git && git push -q origin main
git gasp init --branch >/dev/null && git gasp run start --task "alice's task" >/dev/null
git gasp run finish --outcome promoted >/dev/null && git gasp commit-run >/dev/null
git gasp sync -q && cd ../people
"""


def _team(ran: Ran) -> None:
    alice, mate = ran.cwd.parent / "alice", ran.cwd / "teammate"
    assert git(mate, "rev-parse", "gasp/state") == git(alice, "rev-parse", "gasp/state")
    assert git(mate, "rev-parse", "--abbrev-ref", "gasp/state@{u}").strip() == \
        "origin/gasp/state"
    assert git(mate, "ls-tree", "--name-only", "main").split() == ["app.py"]
    assert git(mate, "status", "--porcelain") == ""
    assert "run.started Test Author alice's task" in ran.stdout, ran.stdout


def _team_remote(ran: Ran) -> None:
    mate = ran.cwd / "teammate"
    assert git(ran.cwd / "history.git", "rev-parse", "gasp/state") == \
        git(mate, "rev-parse", "gasp/state")


def _team_left(ran: Ran) -> None:
    mate = ran.cwd / "teammate"
    config = git(mate, "config", "--local", "--list")
    assert "gasp.state" not in config and "merge.gasp" not in config, config
    assert "gasp.remote=history" in config  # the user's own key: not git-gasp's to take
    assert not (mate / ".claude" / "settings.local.json").exists()
    assert git(mate, "status", "--porcelain", "--ignored") == ""
    assert git(mate, "rev-parse", "--verify", "gasp/state").strip()  # the state stays


def _manpath(ran: Ran) -> None:
    assert ran.stdout.splitlines()[-1] == f"MANPATH={ran.clone / '.venv/share/man'}:"


def _check_json(block: Block, ran: Ran) -> None:
    """The shape shown is the shape printed: the same keys, "…" standing for any text."""
    proc = subprocess.run(["git", "gasp", "check", "--fixture", "fixture", "--json"],
                          cwd=ran.clone, capture_output=True, text=True, env=ran.extra["env"])
    assert proc.returncode == 0, proc.stderr

    def same(shown, real, where="$"):
        if isinstance(shown, dict):
            assert isinstance(real, dict) and set(shown) == set(real), (where, shown, real)
            for k in shown:
                same(shown[k], real[k], f"{where}.{k}")
        elif isinstance(shown, list):
            assert isinstance(real, list) and len(real) >= len(shown), where
            for i, item in enumerate(shown):
                same(item, real[i], f"{where}[{i}]")
        elif shown == "…":
            assert isinstance(real, str), where
        else:
            assert shown == real, (where, shown, real)

    same(json.loads(block.text), json.loads(proc.stdout))


def _library(ran: Ran) -> None:
    assert ran.stdout.strip().splitlines()[-1] == "Promoted"


def _runtime(ran: Ran) -> None:
    repo = ran.cwd / "my-agent"
    assert "Lineage of" in ran.stdout and (repo / "AGENT.md").is_file()
    assert not (repo / ".agent/lease").exists(), "leaving the `with` releases the lease"
    assert "promoted" in git(repo, "log", "-1", "--format=%s")
    assert "Run-Id: run_" in git(repo, "log", "-1", "--format=%B")


def _otel(ran: Ran) -> None:
    repo = ran.cwd
    runs = (repo / "runs.jsonl").read_text().splitlines()
    assert runs and all("resourceSpans" in json.loads(line) for line in runs)
    (one,) = (repo / "run.jsonl").read_text().splitlines()
    assert one in runs
    (posted,) = ran.extra["collector"]
    assert json.loads(posted) == json.loads(one)
    imported = subprocess.run(["git", "gasp", "log", "--kind", "run.started", "--format=%H"],
                              cwd=repo, env=ran.extra["env"], capture_output=True, text=True)
    assert len(imported.stdout.split()) > 1, imported  # the Runtime example's run, and more


def _server(ran: Ran) -> None:
    hook = ran.cwd / "srv/git/agent.git/hooks/pre-receive"
    assert hook.is_file() and os.access(hook, os.X_OK)
    assert "--check" in hook.read_text()


def _pre_commit(block: Block, ran: Ran) -> None:
    """What `install-hooks` prints in a repo the pre-commit framework manages; the same
    hooks (entries, stages) as .pre-commit-hooks.yaml, at both stages, no `rev:`; the
    file doctor reads as healthy."""
    from git_gasp.githooks.manager_config import pre_commit_stages

    repo = ran.cwd / "pre-commit-repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text("")
    proc = subprocess.run(["git", "gasp", "install-hooks"], cwd=repo, capture_output=True,
                          text=True, env=ran.extra["env"])
    assert proc.returncode == 0, proc.stderr
    assert "\n" + block.text + "\n" in proc.stdout, proc.stdout
    config = yaml.safe_load(block.text)
    assert set(config["default_install_hook_types"]) == {"pre-commit", "pre-merge-commit"}
    (entry,) = config["repos"]
    assert entry["repo"] == "local" and "rev" not in entry
    defined = {h["id"]: h for h in yaml.safe_load(
        (REPO_ROOT / ".pre-commit-hooks.yaml").read_text())}
    for hook in entry["hooks"]:
        assert hook["language"] == "system"
        for key in ("entry", "stages", "pass_filenames", "always_run"):
            assert hook[key] == defined[hook["id"]][key], (hook["id"], key)
    assert {s for h in entry["hooks"] for s in h["stages"]} == {"pre-commit",
                                                               "pre-merge-commit"}
    for spec in defined.values():
        assert spec["minimum_pre_commit_version"] == "3.2.0"  # the pre-commit stage names
        assert spec["entry"].startswith("git-gasp hook ")
    (repo / ".pre-commit-config.yaml").write_text(block.text)
    assert pre_commit_stages(repo / ".pre-commit-config.yaml") == {"pre-commit",
                                                                  "pre-merge-commit"}


def _adapters(ran: Ran) -> None:
    repo = ran.cwd / "my-agent"
    assert (repo / ".claude/settings.json").is_file() and (repo / ".codex/hooks.json").is_file()
    assert "# Lineage of `patch_..." in ran.stdout and "Fix add" in ran.stdout, ran.stdout
    assert "—validated_by→" in ran.stdout and "approved_by" in ran.stdout


def _capture(block: Block, ran: Ran) -> None:
    """The [capture] shown is what the program reads, and it is the defaults."""
    from git_gasp.redact.capture import Capture, load

    root = ran.cwd / "capture"
    (root / ".agent").mkdir(parents=True)
    (root / ".agent/config.toml").write_text(block.text)
    read, default = load(root), Capture()
    keys = ("tool_output", "field_limit", "file_inputs", "transcripts")
    assert [getattr(read, k) for k in keys] == [getattr(default, k) for k in keys]
    assert all(f"\n{k} = " in "\n" + block.text for k in keys)


def _kg(ran: Ran) -> None:
    assert "perstate: what the README's kg example saves" in git(
        ran.cwd / "memory.git", "log", "--format=%s", "main")
    assert "llm-evaluation" in ran.stdout, ran.stdout  # what the search found
    assert list((ran.home).glob(".claude/skills/*/SKILL.md")), "install-skill wrote the skill"


def _kg_document(cwd: Path) -> None:
    """doc.yml: a save document creating an entity the block's search finds (the one
    git_gasp/kg/README.md shows relates to entities an empty graph lacks)."""
    (cwd / "doc.yml").write_text(KG_DOC)


def _layout(block: Block, ran: Ran) -> None:
    """The tree shown is the tree: every package of git_gasp/ and every top folder."""
    shown = {ln.split()[0].rstrip("/") for ln in block.text.splitlines()
             if ln.startswith("  ") and ln.split()[0].endswith("/") and not ln.startswith("   ")}
    packages = {p.parent.name for p in (REPO_ROOT / "git_gasp").glob("*/__init__.py")}
    assert shown == packages, (shown ^ packages)
    tops = {ln.split()[0].rstrip("/") for ln in block.text.splitlines()
            if ln and not ln.startswith(" ") and ln.split()[0].endswith("/")}
    assert tops and all((REPO_ROOT / t).is_dir() for t in tops), tops


_SHORT_ID = re.compile(r"\b([a-z]+)_\.\.\.[0-9a-f]{6}\b")
_RANGE = re.compile(r"[0-9a-f]{12}\.\.[0-9a-f]{12}")


def _unvarying(text: str) -> str:
    """`text` without what differs from run to run: short ids' tails, commit ids."""
    return _RANGE.sub("BASE..HEAD", _SHORT_ID.sub(r"\1_...", text)).strip()


def _in_review(ran: Ran) -> None:
    assert "1 commit, 1 explained by the agent's patches, from 1 run." in ran.stdout
    assert "| Failed | pytest -k retry |" in ran.stdout, ran.stdout


def _in_review_output(block: Block, ran: Ran) -> None:
    """The report shown is the report the block before prints, but for ids and commits."""
    proc = subprocess.run(["git", "gasp", "report", "HEAD~1..HEAD"], cwd=ran.cwd / "review",
                          capture_output=True, text=True, env=ran.extra["env"])
    assert proc.returncode == 0, proc.stderr
    assert _unvarying(block.text) == _unvarying(proc.stdout)


# --- the plans, in README order ------------------------------------------------------

PLANS = [
    Plan(".venv/bin/pip install . && .venv/bin/git-gasp check --fixture fixture",
         check=_quick_start),
    Plan("git gasp init --branch           # orphan branch", cwd="beside",
         before="git init -q your-project && echo 'print(1)' > your-project/app.py && "
                "git -C your-project add app.py && git -C your-project commit -qm 'the project'",
         check=_beside_project),
    Plan("git clone ../shared.git teammate", cwd="team/people", before=TEAM_BEFORE,
         check=_team),
    Plan("git config gasp.remote history", cwd="team/people", check=_team_remote),
    Plan("git gasp uninstall", cwd="team/people", check=_team_left),
    Plan('export MANPATH="$(git gasp help --man-path):"',
         substitute=((":\"    # the trailing ':' keeps man's default path",
                      ':"\necho "MANPATH=$MANPATH"'),),  # and print what it set
         check=_manpath),
    Plan('"conformant": true', compare=_check_json),
    Plan('print(graph.nodes["patch_9"]["props"]["status"])', check=_library),
    Plan("with AgentState.open(", cwd="work", check=_runtime),
    Plan("git gasp export otel --all", cwd="work/my-agent",
         before=f"cp {OTEL_INPUT} traces.jsonl",  # an agent's spans: LangChain, OpenInference
         substitute=(
             # the short id log prints for the run the Runtime example recorded
             ("run_...5c0e21", '"$(git gasp log --kind run.started -n 1 --format=%S)"'),
             # a local stand-in for the OTLP/HTTP collector (started by the test)
             ("http://localhost:4318/v1/traces", "$COLLECTOR"),
         ),
         check=_otel),
    Plan("git init -q review && cp -r fixture/. review/", cwd="in-review",
         before="cp -r ../clone/fixture fixture",  # the shipped fixture, beside the clone
         check=_in_review),
    Plan("### git gasp report: ", cwd="in-review", compare=_in_review_output),
    Plan("default_install_hook_types", compare=_pre_commit),
    Plan("install-hooks --server /srv/git/agent.git", cwd="server",
         before="git init -q --bare srv/git/agent.git",
         substitute=((" /srv/git/agent.git", " srv/git/agent.git"),),  # no root: under tmp
         check=_server),
    Plan("claude -p", cwd="adapters",
         substitute=(
             # a real Claude Code 2.1.328 session (the suite's recording), imported: what
             # its hooks record (the e2e tests run the real `claude -p` with npm)
             ('claude -p "fix the failing test"',
              f"git gasp import claude-code {CLAUDE_SESSION}"),
             ("<patch-id>", '"$(git gasp log --kind "patch.*" -n 1 --format=%S)"'),
         ),
         check=_adapters),
    Plan("[capture]\ntool_output", compare=_capture),
    Plan("git gasp kg init", cwd="kg",
         before="git init -q --bare memory.git",  # the remote, here
         prepare=_kg_document,
         substitute=(("git@github.com:me/memory.git", "$PWD/memory.git"),),  # no GitHub
         check=_kg),
    Plan("git_gasp/\n  base/", compare=_layout),
]


def _plan_for(block: Block) -> Plan | None:
    found = [p for p in PLANS if p.key in block.text]
    assert len(found) <= 1, f"{block.where()}: several plans match"
    return found[0] if found else None


def test_every_block_is_run_or_marked():
    """Each block has a marker or exactly one plan; each plan and substitution matches."""
    every = blocks()
    assert len(every) >= 19
    unhandled = [b.where() for b in every if b.tested_by is None and _plan_for(b) is None]
    assert not unhandled, f"README blocks neither run here nor marked tested-by: {unhandled}"
    marked_and_planned = [b.where() for b in every if b.tested_by and _plan_for(b)]
    assert not marked_and_planned, marked_and_planned
    for plan in PLANS:
        (block,) = [b for b in every if plan.key in b.text]
        for written, _ in plan.substitute:
            assert written in block.text, f"{block.where()}: {written!r} is no longer there"


def test_every_marker_names_a_test_that_fetches_its_block():
    for block in blocks():
        if block.tested_by is None:
            continue
        path, _, name = block.tested_by.partition("::")
        source = REPO_ROOT / path
        assert source.is_file(), f"{block.where()}: no {path}"
        tree = ast.parse(source.read_text())
        (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name] \
            or [None]
        assert fn is not None, f"{block.where()}: {path} has no test {name}"
        calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id == "marked_blocks"]
        assert calls, f"{block.where()}: {block.tested_by} never fetches its block"


def test_the_ci_gate_block(tmp_path):
    """The GitHub Actions steps and the GitLab job, parsed as their services parse them,
    fetch the full history (check 4 walks it) and run `git gasp check`; their commands,
    run in a full clone of an agent repo (pip install of the package aside: the suite
    runs the installed one), pass; a shallow clone, which they avoid, does not."""
    (block,) = marked_blocks()
    left = "\n".join(line[:50].rstrip() for line in block.text.splitlines())
    right = "\n".join(line[50:].removeprefix("# ").removeprefix("#") for line in
                      block.text.splitlines()[1:])
    github = yaml.safe_load(left)
    gitlab = yaml.safe_load(right)
    checkout, step = github
    assert checkout["uses"].startswith("actions/checkout@") and \
        checkout["with"]["fetch-depth"] == 0
    assert gitlab["gasp"]["variables"]["GIT_DEPTH"] == 0
    commands = [c.strip() for c in step["run"].split("&&")] + gitlab["gasp"]["script"]
    assert [c for c in commands if c.startswith("pip install")] == ["pip install git-gasp"] * 2
    agent = tmp_path / "agent"
    assert subprocess.run(["git", "gasp", "init", str(agent)], capture_output=True).returncode == 0
    git(agent, "commit", "-q", "--allow-empty", "-m", "second")
    full = tmp_path / "full"
    git(tmp_path, "clone", "-q", f"file://{agent}", str(full))
    for command in commands:
        if not command.startswith("pip install"):
            proc = subprocess.run(command.split(), cwd=full, capture_output=True, text=True)
            assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{agent}", str(shallow))
    assert subprocess.run(["git", "gasp", "check"], cwd=shallow,
                          capture_output=True).returncode != 0


# --- running the plans ---------------------------------------------------------------


class _Collector(http.server.BaseHTTPRequestHandler):
    """A stand-in OTLP/HTTP collector: keeps each body POSTed to /v1/traces."""

    received: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        ok = self.path == "/v1/traces" and self.headers["Content-Type"] == "application/json"
        if ok:
            self.received.append(body.decode())
        self.send_response(200 if ok else 400)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def _env(clone: Path) -> dict[str, str]:
    """The suite's hermetic environment, the clone's .venv first on PATH and no other
    git-gasp on it."""
    env = dict(os.environ)
    rest = [d for d in env["PATH"].split(os.pathsep) if d and not (Path(d) / "git-gasp").exists()]
    env["PATH"] = os.pathsep.join([str(clone / ".venv/bin"), *rest])
    env.pop("VIRTUAL_ENV", None)
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", GIT_PAGER="cat",
               PAGER="cat", SID="readme-session")
    return env


def test_every_unmarked_block_runs_as_written(tmp_path):
    """The README, top to bottom, in one fresh clone and HOME (module doc)."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(REPO_ROOT), str(clone))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Collector.received = []
    env = dict(_env(clone), COLLECTOR=f"http://127.0.0.1:{server.server_port}/v1/traces")
    try:
        for block in blocks():
            plan = None if block.tested_by else _plan_for(block)
            if plan is None:
                continue
            cwd = clone if plan.cwd == "clone" else tmp_path / plan.cwd
            cwd.mkdir(parents=True, exist_ok=True)
            ran = Ran("", clone, cwd, Path(os.environ["HOME"]),
                      {"env": env, "collector": _Collector.received})
            if plan.compare is not None:
                plan.compare(block, ran)
                continue
            if plan.prepare is not None:
                plan.prepare(cwd)
            text = block.text
            for written, run_as in plan.substitute:
                text = text.replace(written, run_as)
            if block.lang == "python":
                script = cwd / f"readme_{block.line}.py"
                script.write_text(text)
                argv = [str(clone / ".venv/bin/python"), str(script)]
            else:
                argv = ["bash", "-e", "-c", (plan.before + "\n" if plan.before else "") + text]
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=600)
            assert proc.returncode == 0, f"{block.where()} failed:\n{proc.stdout}{proc.stderr}"
            ran.stdout = proc.stdout
            if plan.check is not None:
                plan.check(ran)
    finally:
        server.shutdown()
        server.server_close()
