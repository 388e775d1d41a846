from sqlanon.dbt import apply, release_key


def model(dbt, session):
    # DP microdata, charged to the ledger once per run key
    dbt.config(materialized="table")
    key = release_key(dbt.this, dbt.config.get("sqlanon_run_key"))
    return apply(session, "specs/dp.yml", dbt.ref("adult_typed"), release_key=key)
