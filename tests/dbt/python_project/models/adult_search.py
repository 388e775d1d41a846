from sqlanon.dbt import anonymize


def model(dbt, session):
    # generalization: the spec's search runs on the session, then the chosen levels are applied
    dbt.config(materialized="table")
    return anonymize(session, "specs/search.yml", dbt.source("raw", "adult"))
