from sqlanon.dbt import apply, release_key


def model(dbt, session):
    # a second DP release of the same people: its own key, charged to the same budget
    dbt.config(materialized="table")
    key = release_key(dbt.this, dbt.config.get("sqlanon_run_key"))
    return apply(session, "specs/dp.yml", dbt.ref("adult_typed"), release_key=key)
