"""``method: anatomy``: quasi-identifiers published unchanged with a group id, sensitive values per
group apart (Xiao and Tao, "Anatomy: simple and effective privacy preservation", VLDB 2006)."""
