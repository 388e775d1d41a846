"""What anonymization is about, independent of any engine: hierarchies, privacy models, metrics."""
