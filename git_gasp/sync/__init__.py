"""`git gasp sync` and what it leaves behind when it gives up (DESIGN §5).

`sync` is the fetch-integrate-validate-push loop: `integrate` (the git steps, merges
through the union merge driver of `git_gasp.merge`), `validate` (the rules before a
push), `remotes` (how git reaches the state's remote), `backoff` (the waits between
attempts), `state` (its lock, record and refusals under ``<gitdir>/gasp/``) and
`recovery` (the ref it gives up to); `recovery_ops` is `git gasp recovery`.
"""
