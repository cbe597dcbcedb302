"""One module per command family; `git_gasp.cli.main` imports each on first use."""
