"""Reading git objects: the one package that reads the object database or imports
dulwich. One module per git concept: repository discovery (``gitdirs``, ``repo``),
pack indexes (``pack_index``), pack entries and deltas (``pack_entries``), packs and
loose objects (``packs``), object parsing and the check-4 walk's typed reads
(``objects``), typed reads for every other layer and opening a store (``database``),
writing objects and the index (``write``), which implementation reads (``policy``:
``GASP_ODB``), and the index file's stat data (``indexstat``)."""
