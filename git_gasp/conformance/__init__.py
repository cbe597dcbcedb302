"""The seven conformance checks of GASP Part VI and their report.

``checks`` runs them; check 4 walks the history (``conformance.history``, leaving
`TipFacts`); checks 1, 2, 3, 5, 6 and 7 read the log in one pass (``logcheck``) of a
resumable state (``logstate``, rendered by ``logfindings``, snapshots by
``snapshot_check``), saved per verified log blob (``conformance.saved``). Git objects
are read through ``git_gasp.odb``.
"""
