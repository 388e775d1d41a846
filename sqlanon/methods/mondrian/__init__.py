"""``method: mondrian``: multidimensional local recoding by median cuts, run in the database round by
round (docs/local-recoding.md#mondrian)."""
