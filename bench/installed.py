"""git-gasp as a `pip install` leaves it, for benchmarks: a fresh virtualenv whose python
imports git_gasp from a checkout and the rest from this interpreter's site-packages, with
no editable-install finder (a development install's finder costs each start tens of
milliseconds a user never pays)."""

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
    """A bin directory holding `git-gasp` and `git-gasp-hook` as console scripts of
    `interpreter` (put it first on PATH and `git gasp` runs it)."""
    python = interpreter(base, "venv-installed", source)[0]
    bin_dir = pathlib.Path(python).parent
    for name, module in (("git-gasp", "git_gasp.cli.main"),
                         ("git-gasp-hook", "git_gasp.adapters.hook.entry")):
        script = bin_dir / name
        script.write_text(f"#!{python} -P\nimport sys\nfrom {module} import main\n"
                          "sys.exit(main())\n")
        script.chmod(0o755)
    return bin_dir
