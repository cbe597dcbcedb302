"""Reading git objects: the one package that reads the object database or imports
dulwich, which reads every object. One module per git concept: repository discovery
(``gitdirs``, ``repo``), the checks git makes of a pack index before reading it
(``packcheck``), packs and their entries read through dulwich (``packs``), loose
objects bounded by their declared size (``loose``), delta instructions parsed for the
pack prover (``deltas``), git fsck's tree rules (``fsck``), object parsing and the
check-4 walk's typed reads (``objects``), typed reads for every other layer and
opening a store (``database``), writing objects and the index (``write``), and the
index file's stat data (``indexstat``)."""
