"""Packaging: the wheel, the man pages, `git help gasp`, start-up cost, README promises.

The wheel is built once per module from a copy of the source tree (so the build never
writes into the shared checkout) and installed, non-editable, into a fresh venv: that
is the only kind of install that places the man pages, and `git help gasp` runs
`man git-gasp`, which man-db finds through PATH (`<venv>/bin` -> `<venv>/share/man`).
"""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

import git_gasp
from git_gasp.cli.table import COMMANDS
from tests.testing.imports import imported
from tests.testing.paths import REPO_ROOT
from tests.testing.readme import marked_blocks
from tests.testing.run import git_gasp_exe as _git_gasp_exe

MAN_DIR = REPO_ROOT / "man"
MAN_PAGES = sorted(["git-gasp.1", *(f"git-gasp-{name}.1" for name in COMMANDS)])
# Modules `git gasp --version` does not load (bench/bench_startup.py holds its time).
HEAVY = ("dulwich", "yaml", "orjson")
LAYERS = tuple(
    f"git_gasp.{layer}"
    for layer in (
        "protocol",
        "odb",
        "store",
        "conformance",
        "runtime",
        "guard",
        "merge",
        "sync",
        "githooks",
        "adapters",
        "doctor",
        "redact",
        "otel",
        "bridges",
        "kg",
        "view",
    )
)
# One xdist worker builds the wheel and its venv (module fixtures) and runs what uses them.
pytestmark = pytest.mark.xdist_group("packaging")
README_TEST_COMMAND = ".venv/bin/python -m pytest"
README_MAIN_JOB = (
    "python3 -m venv .venv && .venv/bin/pip install . && "
    ".venv/bin/git-gasp check --fixture fixture"
)

_SKIP_NAMES = {
    ".git",
    ".venv",
    "build",
    "dist",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".mypy_cache",
}


def _ignore(directory: str, names: list[str]) -> set[str]:
    skip = {n for n in names if n in _SKIP_NAMES or n.endswith(".egg-info")}
    if Path(directory).resolve() == (REPO_ROOT / "bench").resolve():
        skip.add("out")
    return skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Build the wheel once, from a copy of the tree, with an isolated build env."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    shutil.copytree(REPO_ROOT, src, ignore=_ignore, symlinks=True)
    out = work / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(out)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout}{proc.stderr}"
    wheels = list(out.glob("git_gasp-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed the regular (non-editable) way.

    Only the wheel goes in (--no-deps, --no-index: no network); a .pth line lends
    it this interpreter's site-packages for click and friends, behind its own.
    """
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    venv.create(env_dir, with_pip=False, symlinks=True)
    py = env_dir / "bin" / "python"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}{proc.stderr}"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "_outer_site.pth").write_text("".join(f"{p}\n" for p in sorted(outer)))
    return env_dir


def _env_with(bin_dir: Path) -> dict[str, str]:
    """The current (hermetic) env with `bin_dir` first on PATH and man reading PATH."""
    env = dict(os.environ)
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    env.pop("MANPATH", None)  # a set MANPATH stops man-db deriving paths from PATH
    env.update(LC_ALL="C", LANG="C", MANWIDTH="80", MANPAGER="cat", PAGER="cat", GIT_PAGER="cat")
    return env


def _heavy(mods: list[str]) -> list[str]:
    return [
        m
        for m in mods
        if m.split(".")[0] in HEAVY or any(m == L or m.startswith(L + ".") for L in LAYERS)
    ]


# --- the wheel -------------------------------------------------------------------


@pytest.mark.slow
def test_wheel_contains_package_man_pages_and_license(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "git_gasp/__init__.py" in names
    assert "git_gasp/cli/main.py" in names
    data = f"git_gasp-{git_gasp.__version__}.data/data/share/man/man1/"
    shipped = sorted(n[len(data) :] for n in names if n.startswith(data))
    assert shipped == sorted(p.name for p in MAN_DIR.glob("*.1"))
    assert set(MAN_PAGES) <= set(shipped), "every command needs its man page"
    # ... and inside the package, for `git gasp CMD --help` in any install
    packaged = sorted(n[len("git_gasp/man/") :] for n in names if n.startswith("git_gasp/man/"))
    assert packaged == shipped
    assert "git_gasp/py.typed" in names  # PEP 561
    # the view's page, inlined when `git gasp view` writes it
    assert {f"git_gasp/view/page.{ext}" for ext in ("html", "css", "js")} <= set(names)
    assert f"git_gasp-{git_gasp.__version__}.dist-info/licenses/LICENSE" in names
    assert not [n for n in names if n.startswith(("tests/", "fixture/", "bench/"))]


@pytest.mark.slow
def test_wheel_metadata(wheel):
    zf = zipfile.ZipFile(wheel)
    dist_info = f"git_gasp-{git_gasp.__version__}.dist-info"
    meta = email.message_from_bytes(zf.read(f"{dist_info}/METADATA"))
    assert meta["Name"] == "git-gasp"
    assert meta["Version"] == git_gasp.__version__
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["License-Expression"] == "MIT"
    requires = " ".join(meta.get_all("Requires-Dist"))
    for dep in ("dulwich>=1.2.13", "click", "pyyaml", "orjson", "tomli"):
        assert dep in requires.lower(), dep
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Issues", "Source"} <= set(urls), urls
    assert all(u.startswith("https://") for u in urls.values()), urls
    assert "zstd" in meta.get_all("Provides-Extra")
    assert any(r.startswith("zstandard") and 'extra == "zstd"' in r
               for r in meta.get_all("Requires-Dist"))
    entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
    assert "git-gasp = git_gasp.cli.main:main" in entry_points
    assert "git-gasp-hook" not in entry_points  # a plain script: no `import re` first
    script = zf.read(f"git_gasp-{git_gasp.__version__}.data/scripts/git-gasp-hook").decode()
    assert script.startswith("#!python\n")
    assert "from git_gasp.adapters.agent_hook.entry import main" in script


@pytest.mark.slow
def test_wheel_ships_the_hook_template_from_top_level_hooks(wheel):
    """hooks/pre-commit reaches the wheel as git_gasp/githooks/scripts/pre-commit, unchanged."""
    shipped = zipfile.ZipFile(wheel).read("git_gasp/githooks/scripts/pre-commit")
    assert shipped == (REPO_ROOT / "hooks" / "pre-commit").read_bytes()


def _pyproject() -> dict:
    from git_gasp.base.toml import tomllib

    with open(REPO_ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def _pyproject_packages() -> list[str]:
    return _pyproject()["tool"]["setuptools"]["packages"]


def test_pyproject_lists_exactly_the_packages_in_the_tree():
    """The explicit package list is the tree's packages plus hooks/ and man/ as packages."""
    tree = {
        ".".join(init.parent.relative_to(REPO_ROOT).parts)
        for init in (REPO_ROOT / "git_gasp").rglob("__init__.py")
    }
    listed = _pyproject_packages()
    assert len(listed) == len(set(listed)), "a package is listed twice"
    assert set(listed) == tree | {"git_gasp.githooks.scripts", "git_gasp.man"}


def test_missing_zstd_names_the_extra(tmp_path, monkeypatch):
    """A .jsonl.zst with no zstd at hand: the one-line error names `git-gasp[zstd]`."""
    import shutil

    from git_gasp.adapters import records
    from git_gasp.base.errors import GaspError

    for name in ("zstandard", "compression", "compression.zstd"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    monkeypatch.setattr(shutil, "which", lambda _name: None)  # records imports it when needed
    zst = tmp_path / "rollout.jsonl.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd")
    with pytest.raises(GaspError, match=re.escape("pip install 'git-gasp[zstd]'")):
        records.read_raw(zst)
    extras = _pyproject()["project"]["optional-dependencies"]
    assert any(dep.startswith("zstandard") for dep in extras["zstd"])


# --- a regular install: entry point, man pages, `git help gasp` --------------------


@pytest.mark.slow
def test_installed_console_script_runs(installed, tmp_path):
    proc = subprocess.run(
        [str(installed / "bin" / "git-gasp"), "--version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env_with(installed / "bin"),
    )
    assert proc.returncode == 0, proc.stderr
    assert git_gasp.__version__ in proc.stdout
    # the installed copy, not the checkout, answered
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import git_gasp; print(git_gasp.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(installed), where


@pytest.mark.slow
def test_installed_view_writes_its_page_from_package_data(installed, fixture_repo, tmp_path):
    """`git gasp view` of a regular install inlines the page files the wheel ships."""
    page = tmp_path / "view.html"
    proc = subprocess.run(
        [str(installed / "bin" / "git-gasp"), "view", "-o", str(page), "--no-open"],
        capture_output=True, text=True, cwd=fixture_repo, env=_env_with(installed / "bin"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 nodes" in proc.stdout and "1 run," in proc.stdout
    text = page.read_text("utf-8")
    assert "Make retry reliable" in text and 'id="lin-inner"' in text and '"use strict"' in text


@pytest.mark.slow
def test_man_pages_installed_under_venv_share(installed):
    man1 = installed / "share" / "man" / "man1"
    assert sorted(p.name for p in man1.glob("*.1")) == sorted(p.name for p in MAN_DIR.glob("*.1"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("man") is None, reason="man (man-db) is not installed")
def test_man_finds_pages_through_path(installed, tmp_path):
    env = _env_with(installed / "bin")
    for page in MAN_PAGES:
        proc = subprocess.run(
            ["man", "-w", page[:-2]], capture_output=True, text=True, cwd=tmp_path, env=env
        )
        assert proc.returncode == 0, proc.stderr
        assert Path(proc.stdout.strip()) == installed / "share" / "man" / "man1" / page


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("man") is None, reason="man (man-db) is not installed")
@pytest.mark.parametrize(
    "argv, title",
    [
        (["help", "gasp"], "GIT-GASP(1)"),
        (["gasp", "--help"], "GIT-GASP(1)"),
        # git maps `help gasp-check` to gitgasp-check(1); the full name works
        (["help", "git-gasp-check"], "GIT-GASP-CHECK(1)"),
        (["help", "git-gasp-fold"], "GIT-GASP-FOLD(1)"),
        (["help", "git-gasp-snapshot"], "GIT-GASP-SNAPSHOT(1)"),
        (["help", "git-gasp-init"], "GIT-GASP-INIT(1)"),
        (["help", "git-gasp-export"], "GIT-GASP-EXPORT(1)"),
    ],
)
def test_git_help_opens_man_page(installed, tmp_path, argv, title):
    proc = subprocess.run(
        ["git", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env_with(installed / "bin"),
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert title in proc.stdout
    assert "SYNOPSIS" in proc.stdout


# --- a pipx / uv tool install: the venv's bin/ is not on PATH, only a link to the script ---


@pytest.fixture
def tool_bin(installed, tmp_path) -> Path:
    """A pipx / `uv tool install` layout: PATH holds a link to the venv's git-gasp, so
    man-db cannot derive the venv's share/man from PATH."""
    bin_dir = tmp_path / "tool-bin"
    bin_dir.mkdir()
    (bin_dir / "git-gasp").symlink_to(installed / "bin" / "git-gasp")
    return bin_dir


def _tool_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    """As pipx leaves PATH: the link's directory, and no directory holding another
    git-gasp (the test runner's venv bin/ would let man-db find that venv's pages)."""
    env = _env_with(bin_dir)
    rest = [d for d in env["PATH"].split(os.pathsep)[1:]
            if d and not (Path(d) / "git-gasp").exists()]
    env["PATH"] = os.pathsep.join([str(bin_dir), *rest])
    env.update(extra)
    return env


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("man") is None, reason="man (man-db) is not installed")
def test_tool_install_help_and_the_man_path_hint(installed, tool_bin, tmp_path):
    """README's pipx / uv block: pipx is not run (it needs the network), the layout it
    leaves is (`tool_bin`: a link to the wheel's venv script); the specs it installs
    are the checkout and an extra pyproject defines."""
    (block,) = marked_blocks()
    specs = re.findall(r"^pipx install (\S+)", block.text, re.MULTILINE)
    assert specs == [".", "'.[zstd]'"] and "uv tool install ." in block.text, block.text
    assert "zstd" in _pyproject()["project"]["optional-dependencies"]
    env = _tool_env(tool_bin)
    run = dict(capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
    # what the issue saw: git's `man git-gasp` finds nothing
    proc = subprocess.run(["git", "help", "gasp"], env=env, **run)
    assert proc.returncode != 0 and "No manual entry" in proc.stderr, proc.stdout
    # `--help` still shows the page: man -l on the package's copy
    proc = subprocess.run(["git", "gasp", "check", "--help"], env=env, **run)
    assert proc.returncode == 0, proc.stderr
    assert "GIT-GASP-CHECK(1)" in proc.stdout and "SYNOPSIS" in proc.stdout
    # the README's fix: the install's man directory on MANPATH (':' keeps the default path)
    proc = subprocess.run(["git", "gasp", "help", "--man-path"], env=env, **run)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == installed / "share" / "man"
    env = _tool_env(tool_bin, MANPATH=proc.stdout.strip() + ":")
    for argv, title in ((["help", "gasp"], "GIT-GASP(1)"),
                        (["help", "git-gasp-check"], "GIT-GASP-CHECK(1)")):
        proc = subprocess.run(["git", *argv], env=env, **run)
        assert proc.returncode == 0, proc.stderr
        assert title in proc.stdout


@pytest.mark.slow
def test_tool_install_without_man_renders_the_packaged_page(installed, tool_bin, tmp_path):
    """No man at all (a minimal container): the page shipped in the package, rendered."""
    proc = subprocess.run(
        [str(tool_bin / "git-gasp"), "kg", "--help"],
        capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL,
        env=_tool_env(tool_bin, PATH=str(tool_bin)),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("GIT-GASP-KG(1)") and "OPTIONS OF SEARCH" in proc.stdout
    packaged = next((installed / "lib").glob("python*/site-packages/git_gasp/man/git-gasp-kg.1"))
    assert packaged.read_bytes() == (MAN_DIR / "git-gasp-kg.1").read_bytes()


# --- man page sources ---------------------------------------------------------------


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_page_renders_without_warnings(page):
    for device in ("utf8", "ascii"):
        proc = subprocess.run(
            ["groff", "-man", "-ww", "-z", f"-T{device}", str(MAN_DIR / page)],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr


# OPTIONS sections against the click definitions: tests/test_man_pages.py


# --- the CLI as the checkout's venv has it ----------------------------------------------


def test_version_prints_package_version(tmp_path):
    from importlib.metadata import version

    proc = subprocess.run(
        [*_git_gasp_exe(), "--version"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"git-gasp, version {git_gasp.__version__}"
    assert version("git-gasp") == git_gasp.__version__


def test_git_gasp_h_lists_the_commands(tmp_path):
    proc = subprocess.run(["git", "gasp", "-h"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Commands:" in proc.stdout
    listed = proc.stdout.split("Commands:", 1)[1]
    found = {m.group(1) for m in re.finditer(r"^\s{2}(\S+)", listed, re.MULTILINE)}
    assert {"check", "fold", "snapshot", "init"} <= found, proc.stdout


def test_version_run_loads_no_heavy_modules(tmp_path):
    """The real entry point, end to end: `git-gasp --version` under PYTHONPROFILEIMPORTTIME."""
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.run(
        [*_git_gasp_exe(), "--version"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert proc.returncode == 0, proc.stderr
    mods = imported(proc.stderr)
    assert "git_gasp.cli.main" in mods
    assert not _heavy(mods) and "click" not in mods, _heavy(mods)


# --- README and CI agree -----------------------------------------------------------


def test_readme_newcomer_commands_and_ci_agree():
    """The README's test and development commands are what CI runs: its test command
    exactly, the others as CI takes them (CI installs non-editable, so the man pages
    install; `-m "not slow"` selects a part of the same run)."""
    readme = (REPO_ROOT / "README.md").read_text()
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert README_MAIN_JOB in readme
    assert README_TEST_COMMAND in readme
    assert f"\n{README_TEST_COMMAND} " in ci, ".ci/run must run exactly the README's test command"
    assert re.search(r"^\.venv/bin/pip install (--quiet )?'\.\[test\]'$", ci, re.MULTILINE)
    assert "-e '.[test]'" not in ci, "CI installs non-editable, so the man pages install"
    assert "git-gasp check --fixture fixture" in ci
    assert ci.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in ci
    assert os.access(REPO_ROOT / ".ci" / "run", os.X_OK)
    ran = {" ".join(line.replace("--quiet ", "").split()) for line in ci.splitlines()}
    ran = {c.split(" </dev/null")[0].split(" || ")[0] for c in ran}
    blocks = marked_blocks()  # the test block of Quick start and Development's block
    assert len(blocks) == 2
    markers = _pyproject()["tool"]["pytest"]["ini_options"]["markers"]
    for block in blocks:
        for line in block.text.splitlines():
            for command in line.split("#", 1)[0].split("&&"):
                command = " ".join(command.split())
                if command.endswith(' -m "not slow"'):  # the fast loop: CI's run, in part
                    assert any(m.startswith("slow:") for m in markers), markers
                    command = command[: -len(' -m "not slow"')]
                command = command.replace("pip install -e ", "pip install ")
                assert command in ran, f"{block.where()}: CI does not run {command!r}"


def test_main_man_page_lists_every_command():
    from git_gasp.cli.table import COMMANDS

    page = (REPO_ROOT / "man" / "git-gasp.1").read_text()
    section = page.split(".SH COMMANDS", 1)[1].split(".SH ", 1)[0]
    listed = {line[3:].replace("\\-", "-") for line in section.splitlines()
              if line.startswith(".B ")}
    assert set(COMMANDS) <= listed, sorted(set(COMMANDS) - listed)


def test_markdown_links_resolve():
    """Every relative link of the shipped Markdown points at a file of the repository."""
    broken = []
    for md in (REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md",
               *(REPO_ROOT / "git_gasp").rglob("*.md")):
        for target in re.findall(r"\]\(([^)\s]+)\)", md.read_text()):
            if re.match(r"[a-z]+:|#", target):
                continue
            if not (md.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{md.relative_to(REPO_ROOT)}: {target}")
    assert not broken, broken


def test_init_hint_names_identity_amend(tmp_path):
    """`init`'s next step is the command that edits the identity, with its required options."""
    from git_gasp.cli.commands.identity import identity_amend

    proc = subprocess.run([*_git_gasp_exe(), "init", "a", "--agent-id", "a"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    hint = proc.stdout.splitlines()[-1]
    assert hint.startswith("next: ") and "`git gasp identity amend" in hint
    required = [o for p in identity_amend.params if p.required for o in p.opts]
    assert required and all(opt in hint for opt in required), (hint, required)
