"""The command table of the click group: each command's module is imported on first
use (`cli.group.LazyGroup`), and the program name `--version` prints."""

from __future__ import annotations

VERSION_PROG = "git-gasp"  # the name `--version` prints (the click group's prog_name)

# command name -> "module:attribute"; modules are imported on first use.
COMMANDS: dict[str, str] = {
    "check": "git_gasp.cli.commands.check:check",
    "fold": "git_gasp.cli.commands.fold:fold",
    "snapshot": "git_gasp.cli.commands.snapshot:snapshot",
    "init": "git_gasp.cli.commands.init:init",
    "kg": "git_gasp.cli.commands.kg:kg",
    "import": "git_gasp.cli.commands.import_:import_",
    "export": "git_gasp.cli.commands.export:export",
    "adapt": "git_gasp.cli.commands.adapt:adapt",
    "install": "git_gasp.cli.commands.install:install",
    "install-hooks": "git_gasp.cli.commands.githooks:install_hooks",
    "uninstall": "git_gasp.cli.commands.uninstall:uninstall",
    "hook": "git_gasp.cli.commands.githooks:hook",
    "doctor": "git_gasp.cli.commands.githooks:doctor",
    "merge-driver": "git_gasp.cli.commands.merge_driver:merge_driver",
    "run": "git_gasp.cli.commands.run:run",
    "record": "git_gasp.cli.commands.record:record",
    "commit-run": "git_gasp.cli.commands.commit_run:commit_run",
    "forget": "git_gasp.cli.commands.forget:forget",
    "log": "git_gasp.cli.commands.log:log",
    "search": "git_gasp.cli.commands.search:search",
    "blame": "git_gasp.cli.commands.blame:blame",
    "stats": "git_gasp.cli.commands.stats:stats",
    "report": "git_gasp.cli.commands.report:report",
    "lineage": "git_gasp.cli.commands.queries:lineage",
    "diff": "git_gasp.cli.commands.queries:diff",
    "fork": "git_gasp.cli.commands.fork:fork",
    "restore": "git_gasp.cli.commands.restore:restore",
    "memory": "git_gasp.cli.commands.memory:memory",
    "journal": "git_gasp.cli.commands.journal:journal",
    "identity": "git_gasp.cli.commands.identity:identity",
    "lease": "git_gasp.cli.commands.lease:lease",
    "sync": "git_gasp.cli.commands.sync:sync",
    "recovery": "git_gasp.cli.commands.recovery:recovery",
    "status": "git_gasp.cli.commands.status:status",
    "completion": "git_gasp.cli.commands.completion:completion",
    "mcp": "git_gasp.cli.commands.mcp:mcp",
    "proxy": "git_gasp.cli.commands.proxy:proxy",
    "view": "git_gasp.cli.commands.view:view",
    "recap": "git_gasp.cli.commands.recap:recap",
    "resume": "git_gasp.cli.commands.resume:resume",
}
