"""The union merge driver for GASP's append-only files (DESIGN §5), and `git gasp sync`.

`jsonl` merges logs and facts by line identity, `journal` merges JOURNAL.md by
appended block, `driver` does the file I/O, the rule choice by path and the
fallback to git's own text merge. `lines` holds what they share.

`sync` is the fetch-integrate-validate-push loop over them: `integrate` (the git
steps), `validate` (the rules before a push), `backoff`, `recovery` (the ref it gives
up to) and `sync_state` (its lock, record and refusals under ``<gitdir>/gasp/``).
"""
