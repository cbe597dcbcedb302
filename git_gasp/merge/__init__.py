"""The union merge driver for GASP's append-only files (DESIGN §5).

`jsonl` merges logs and facts by line identity, `journal` merges JOURNAL.md by
appended block, `driver` does the file I/O, the rule choice by path and the
fallback to git's own text merge. `lines` holds what they share. `git gasp sync`,
which runs merges through this driver, is `git_gasp.sync`.
"""
