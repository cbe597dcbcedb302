"""Check 4 (append-only in git): the walk over the commit DAG (``walk``, ``check``),
its cache of verified commits (``cache``), the pack-delta prover (``prover``), the
working tree against HEAD (``worktree``), extensions the guard proved (``proven``) and
what the walk leaves the other checks (``tipfacts``)."""
