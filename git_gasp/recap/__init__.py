"""Recap: a deterministic account of runs from the fold and its log (no model).

`account` gathers what one run did (goal, what was tried, what failed and why, the
patches and their commits, evals in the order they ran, decisions, open tasks),
`render` writes it as text, Markdown or JSON (`git gasp recap`), and `priming` turns it
into the first prompt of a new session of any agent (`git gasp resume`).
"""
