"""git-gasp as a `pip install` leaves it, for benchmarks: a fresh virtualenv whose python
imports git_gasp from a checkout (`interpreter`) or from a wheel pip installed, with the
console scripts pip generates (`installed_bin`), and the rest from this interpreter's
site-packages; no editable-install finder (a development install's finder costs each
start tens of milliseconds a user never pays)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import sysconfig


def interpreter(base: pathlib.Path, name: str, source: pathlib.Path) -> list[str]:
    """The CLI run by a fresh virtualenv's python that imports git_gasp from `source`
    and the rest from this interpreter's site-packages (like an installed package)."""
    venv = base / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    here = sysconfig.get_paths()["purelib"]
    pathlib.Path(site.stdout.strip(), "gasp-bench.pth").write_text(f"{source}\n{here}\n")
    return [str(python), "-P", "-m", "git_gasp.cli.main"]


def installed_bin(base: pathlib.Path, source: pathlib.Path) -> pathlib.Path:
    """The bin directory of a fresh virtualenv into which pip installed git-gasp from a
    wheel built from `source` (its dependencies from this interpreter's site-packages):
    `git-gasp` and `git-gasp-hook` there are the console scripts pip generates, what a
    user runs (put it first on PATH and `git gasp` runs it)."""
    wheels = base / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(wheels), str(source)], check=True, stdout=subprocess.DEVNULL)
    venv = base / "venv-installed"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", *map(str, wheels.glob("git_gasp-*.whl"))],
                   check=True)
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    here = sysconfig.get_paths()["purelib"]
    pathlib.Path(site.stdout.strip(), "gasp-deps.pth").write_text(f"{here}\n")
    return python.parent
