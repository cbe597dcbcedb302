"""Install the real agent CLIs from npm and run one scripted session of each.

Versions are pinned to the ones the readers are tested with. Installs go to a cache
directory (``$GASP_E2E_CACHE``, default ``~/.cache/git-gasp-e2e`` of the real user) so
they happen once per machine, under a lock, so parallel workers install each once.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_gasp.base.fileops import file_lock
from tests.e2e.servers import (
    AIDER_PROMPT,
    GEMINI_MODEL,
    PROMPT,
    QWEN_MODEL,
    ChatHandler,
    ClaudeHandler,
    CodexHandler,
    GeminiHandler,
    ModelServer,
    claude_script,
    codex_script,
    gemini_script,
    qwen_script,
)

AIDER_PKG = "aider-chat==0.86.2"  # PyPI; an agent with no hooks, recorded by the proxy
CLAUDE_PKG = "@anthropic-ai/claude-code@2.1.328"
CODEX_PKG = "@openai/codex@0.171.0"
GEMINI_PKG = "@google/gemini-cli@0.61.0"
QWEN_PKG = "@qwen-code/qwen-code@0.24.4"
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
               "PostToolUseFailure", "Stop", "SessionEnd")
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def cache_dir() -> Path:
    env = os.environ.get("GASP_E2E_CACHE")
    if env:
        return Path(env)
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "git-gasp-e2e"


def npm_install(package: str) -> tuple[Path | None, str]:
    """Install `package` into the cache; (prefix dir, "") or (None, why it failed)."""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed"
    prefix = cache_dir() / package.replace("/", "_").replace("@", "")
    marker = prefix / ".installed"
    if marker.exists():
        return prefix, ""
    prefix.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers (and two suites on one machine) share the cache: the first
    # installs under the lock, the others wait for it and find the marker.
    with file_lock(prefix.with_name(prefix.name + ".lock"), f"npm install {package}",
                   timeout=1000):
        if marker.exists():
            return prefix, ""
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), package],
            capture_output=True, text=True, timeout=900, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            return None, f"npm install {package} failed: {' / '.join(tail)}"
        marker.write_text(package + "\n")
    return prefix, ""


def claude_binary(prefix: Path) -> Path | None:
    for rel in ("node_modules/@anthropic-ai/claude-code-linux-x64/claude",
                "node_modules/@anthropic-ai/claude-code-linux-arm64/claude",
                "node_modules/.bin/claude"):
        if (prefix / rel).exists():
            return prefix / rel
    return None


def codex_binary(prefix: Path) -> Path | None:
    vendor = prefix / "node_modules/@openai"
    for path in sorted(vendor.glob("codex-linux-*/vendor/*/codex/codex")) + sorted(
            vendor.glob("codex-linux-*/vendor/*/codex")):
        if path.is_file():
            return path
    js = prefix / "node_modules/.bin/codex"
    return js if js.exists() else None


def gemini_binary(prefix: Path) -> Path | None:
    js = prefix / "node_modules/.bin/gemini"
    return js if js.exists() else None


def qwen_binary(prefix: Path) -> Path | None:
    js = prefix / "node_modules/.bin/qwen"
    return js if js.exists() else None


def installed(package: str, find) -> Path:
    """The program of `package` (found under its install prefix by `find`), installed
    into the cache; skips the calling test, saying why, when npm or the registry cannot
    give it."""
    prefix, why = npm_install(package)
    if prefix is None:
        pytest.skip(f"end-to-end test needs {package}: {why}")
    binary = find(prefix)
    if binary is None:
        pytest.skip(f"{package} installed but its program was not found under {prefix}")
    return binary


@dataclass
class Session:
    agent: str
    proc: subprocess.CompletedProcess
    transcript: Path | None
    requests: list

    def describe(self) -> str:
        return (f"{self.agent} exited {self.proc.returncode}\nstdout: {self.proc.stdout[-2000:]}"
                f"\nstderr: {self.proc.stderr[-3000:]}")


def hook_entries(command: str, events: tuple[str, ...] = HOOK_EVENTS) -> dict:
    """The `hooks` object both agents read, running `command` for every event."""
    out = {}
    for event in events:
        entry: dict = {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
        if event in TOOL_EVENTS:
            entry["matcher"] = "*"
        out[event] = [entry]
    return out


def agent_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE", "CODEX_", "GEMINI_",
                                "GOOGLE_", "QWEN_"))}
    env.update(HOME=str(home), DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               DISABLE_AUTOUPDATER="1", NO_COLOR="1", CI="1")
    return env


def run_claude(binary: Path, repo: Path, home: Path, *, timeout: int = 240,
               noisy: bool = False,
               through: Callable[[str], AbstractContextManager[str]] | None = None
               ) -> Session:
    """One `claude -p` session in `repo` against the scripted model (`through`: given
    the model's URL, a context giving the URL Claude Code is pointed at, a proxy's)."""
    script = claude_script(sys.executable, noisy=noisy)
    with ModelServer(ClaudeHandler, script, str(repo)) as server:
        model_url = f"http://127.0.0.1:{server.port}"
        with through(model_url) if through else nullcontext(model_url) as base_url:
            env = agent_env(home)
            env.update(ANTHROPIC_BASE_URL=base_url,
                       ANTHROPIC_API_KEY="sk-ant-test-not-a-real-key")
            proc = subprocess.run(
                [str(binary), "-p", PROMPT, "--allowedTools", "Bash,Write,Edit,Read"],
                cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
                stdin=subprocess.DEVNULL, check=False)
        requests = list(server.requests)
    found = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    return Session("claude-code", proc, found[-1] if found else None, requests)


def codex_config(home: Path, repo: Path, port: int) -> Path:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n\n[model_providers.mock]\nname = "mock"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nenv_key = "MOCK_API_KEY"\n'
        'wire_api = "responses"\n\n'
        f"[projects.{json.dumps(str(repo))}]\ntrust_level = \"trusted\"\n")
    return codex_home


def run_codex(binary: Path, repo: Path, home: Path, *, timeout: int = 240,
              noisy: bool = False) -> Session:
    """One `codex exec` session in `repo` against the scripted model."""
    script = codex_script(sys.executable, noisy=noisy)
    with ModelServer(CodexHandler, script, str(repo)) as server:
        codex_home = codex_config(home, repo, server.port)
        env = agent_env(home)
        env.update(CODEX_HOME=str(codex_home), MOCK_API_KEY="test-key")
        proc = subprocess.run(
            [str(binary), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
             PROMPT], cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, check=False)
        requests = list(server.requests)
    found = sorted((codex_home / "sessions").glob("**/rollout-*.jsonl*"))
    return Session("codex", proc, found[-1] if found else None, requests)


def pip_install(package: str) -> tuple[Path | None, str]:
    """Install the PyPI `package` (``name==version``) into a venv of its own in the cache
    (its dependencies must not meet the suite's); (venv dir, "") or (None, why not)."""
    venv = cache_dir() / package.replace("==", "-")
    marker = venv / ".installed"
    if marker.exists():
        return venv, ""
    venv.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(venv.with_name(venv.name + ".lock"), f"pip install {package}",
                   timeout=1500):
        if marker.exists():
            return venv, ""
        for argv in ([sys.executable, "-m", "venv", "--clear", str(venv)],
                     [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                      "--disable-pip-version-check", package]):
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=1200,
                                  check=False)
            if proc.returncode != 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                return None, f"{' '.join(argv[-2:])} failed: {' / '.join(tail)}"
        marker.write_text(package + "\n")
    return venv, ""


def run_aider(venv: Path, repo: Path, home: Path, base_url: str, *,
              timeout: int = 300) -> subprocess.CompletedProcess:
    """One `aider --message` session in `repo` on the OpenAI-compatible model at
    `base_url` (``OPENAI_API_BASE``): the whole-file edit format, every question
    answered yes, nothing fetched from the network (litellm's and Aider's model tables
    read locally)."""
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True, exist_ok=True)
    (caches / "model_prices_and_context_window.json").write_text(json.dumps({
        "openai/gpt-test": {"max_input_tokens": 128000, "max_output_tokens": 4096,
                            "max_tokens": 4096, "input_cost_per_token": 0.0,
                            "output_cost_per_token": 0.0, "litellm_provider": "openai",
                            "mode": "chat"}}))
    env = agent_env(home)
    env.update(OPENAI_API_BASE=base_url, OPENAI_API_KEY="sk-test-not-a-real-key-aider",
               LITELLM_LOCAL_MODEL_COST_MAP="True", TERM="dumb")
    return subprocess.run(
        [str(venv / "bin" / "aider"), "--model", "openai/gpt-test", "--edit-format", "whole",
         "--yes-always", "--no-check-update", "--analytics-disable",
         "--no-show-model-warnings", "--no-gitignore", "--no-pretty", "--no-fancy-input",
         "--message", AIDER_PROMPT, "calc.py"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL, check=False)


def run_gemini(binary: Path, repo: Path, home: Path, *, timeout: int = 240,
               script: list | None = None) -> Session:
    """One `gemini -p` session in `repo` against the scripted model: API-key auth
    (``~/.gemini/settings.json``), ``GOOGLE_GEMINI_BASE_URL`` at the server, the
    workspace trusted for the session, every tool approved (``--approval-mode yolo``)."""
    settings = home / ".gemini" / "settings.json"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                        "privacy": {"usageStatisticsEnabled": False}}))
    with ModelServer(GeminiHandler, script or gemini_script(sys.executable), str(repo)) as server:
        env = agent_env(home)
        env.update(GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{server.port}",
                   GEMINI_API_KEY="test-key-not-a-real-key", GEMINI_CLI_TRUST_WORKSPACE="true")
        proc = subprocess.run(
            [str(binary), "-p", PROMPT, "--approval-mode", "yolo", "-m", GEMINI_MODEL],
            cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, check=False)
        requests = list(server.requests)
    found = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))
    return Session("gemini", proc, found[-1] if found else None, requests)


def run_qwen(binary: Path, repo: Path, home: Path, *, timeout: int = 240) -> Session:
    """One `qwen -p` session in `repo` against the scripted OpenAI-compatible model
    (``OPENAI_BASE_URL``; ``security.auth.selectedType = "openai"`` in
    ``~/.qwen/settings.json``), every tool approved (``--approval-mode yolo``)."""
    settings = home / ".qwen" / "settings.json"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}},
                                        "model": {"name": QWEN_MODEL},
                                        "privacy": {"usageStatisticsEnabled": False}}))
    with ModelServer(ChatHandler, qwen_script(sys.executable), str(repo)) as server:
        env = agent_env(home)
        env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{server.port}/v1",
                   OPENAI_API_KEY="test-key-not-a-real-key", OPENAI_MODEL=QWEN_MODEL,
                   QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
        proc = subprocess.run(
            [str(binary), "-p", PROMPT, "--approval-mode", "yolo"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, check=False)
        requests = list(server.requests)
    found = sorted((home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    return Session("qwen-code", proc, found[-1] if found else None, requests)
