"""The self-contained, offline HTML pages: `git gasp view` and `git gasp kg view`.

``data`` (what the `view` page holds: domain nodes and relations whole, events as rows,
the raw layer counted per run), ``runs`` (the run summaries of the timeline), ``page``
(the template, its CSS and JS from package data, inlined under a strict CSP, and the
write); ``kg_page`` the knowledge graph's page (`kg view`); ``htmlpage`` what both share:
data that cannot escape its script element, and the CSP. On the layers up to runtime,
and kg.
"""
