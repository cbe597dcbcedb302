"""Reading git objects: the one package that reads the object database or imports
dulwich. One module per git concept: repository discovery (``gitdirs``, ``repo``),
pack indexes (``pack_index``), pack entries and deltas (``pack_entries``), packs and
loose objects (``packs``), object parsing and typed reads (``objects``), and the
index file's stat data (``indexstat``)."""
