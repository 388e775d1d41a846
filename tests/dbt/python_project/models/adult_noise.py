from sqlanon.dbt import apply


def model(dbt, session):
    dbt.config(materialized="table")
    return apply(session, "specs/noise.yml", dbt.ref("adult_typed"))
