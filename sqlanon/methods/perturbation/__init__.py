"""``method: noise``: noise, swapping, PRAM and condensation applied to a table (docs/noise.md)."""
