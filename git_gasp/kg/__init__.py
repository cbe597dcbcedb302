"""Perstate-format knowledge graph (`git gasp kg`).

A graph is a git tree: `entities/<id>/entity.md` holds an entity,
`entities/<from>/<relation-type>/<to>.md` one relation, both Markdown with YAML
front matter; `schema/ontology.md` documents the types. One repository holds a
branch per identity; the state home (`~/.perstate`, or `$PERSTATE_HOME`) keeps a
bare clone per repository and one worktree per branch, and `config.yml` binds
sessions to branches. The format is Perstate's (git_gasp/kg/README.md).

Modules, one job each: `ids` (id rules), `frontmatter` (parse/edit front matter
without losing fields), `model` (entity/relation files), `config` (config.yml),
`workspace` (clone, worktrees, sync), `records` (one indexed file), `packed` (the
index format and the Graph over it), `index` (the search index cache), `document`
(the save document), `plan` (what a save writes: no git, no writes), `save`
(apply, commit, push), `search`, `info`, `branches` (fork/switch), `prune`,
`skills` (install-skill; the file itself is skill/SKILL.md). Git runs through
base.git, files are replaced through base.files. The graph's HTML page (`kg view`)
is ``view.kg_page``.
"""
