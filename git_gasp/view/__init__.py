"""`git gasp view`: the agent's history as one self-contained, offline HTML page.

``data`` (what the page holds: domain nodes and relations whole, events as rows, the
raw layer counted per run), ``runs`` (the run summaries of the timeline), ``page``
(the template, its CSS and JS from package data, inlined under a strict CSP, and the
write). On the layers up to runtime; the page's escaping is ``base.htmlpage``'s.
"""
