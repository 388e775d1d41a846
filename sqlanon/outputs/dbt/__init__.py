"""dbt artifacts from a spec: the anonymized model's SELECT and its privacy gates (docs/dbt.md)."""
