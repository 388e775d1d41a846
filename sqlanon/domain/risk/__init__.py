"""Re-identification risk: estimators over class-size histograms and record-level measures."""
