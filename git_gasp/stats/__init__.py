"""Attribution and activity in aggregate: `git gasp stats` (lines at a revision by agent,
model, person and goal; runs, calls, tokens, evals and patches) and `git gasp report`
(a pull request's runs, evals, decisions and AI share). Lines are summed over blame's one
engine (`attribution.blame.Explainer`), activity counted from the fold and the log
(`view.runs.RunTable`). Sits on attribution, view and the runtime; cli uses it.
"""
