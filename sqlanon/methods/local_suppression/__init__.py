"""Local (cell) suppression: k-anonymity by setting single quasi-identifier cells to NULL, where a
NULL matches any value (sdcMicro's semantics for missing key values)."""
