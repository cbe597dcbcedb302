"""`git gasp --version` runs before click is imported (`cli.main.main`) and prints
what click's version option prints."""

from __future__ import annotations

import subprocess
import sys


def test_version_without_click_prints_what_click_prints():
    """`--version` alone never imports click; its text is click's version_option's."""
    from click.testing import CliRunner

    from git_gasp.cli.group import cli

    fast = subprocess.run([sys.executable, "-c", "import sys\nfrom git_gasp.cli.main import "
                           "main\ntry:\n    main(['--version'])\nexcept SystemExit as e:\n"
                           "    assert e.code == 0\nassert 'click' not in sys.modules"],
                          capture_output=True, check=True)
    slow = CliRunner().invoke(cli, ["--version"])
    assert slow.exit_code == 0
    assert fast.stdout.decode() == slow.output and slow.output.startswith("git-gasp, version ")
