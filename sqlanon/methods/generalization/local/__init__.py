"""Local recoding on top of the optimal search, as ARX does it (``transformation.recoding: local``)."""
