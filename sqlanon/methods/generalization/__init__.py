"""``method: generalization``: full-domain generalization with suppression, and the lattice search."""
