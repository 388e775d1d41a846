from sqlanon.dbt import dp_query, release_key
from sqlanon.methods.dp import Histogram


def model(dbt, session):
    # a DP histogram, charged to the same ledger dataset once per run key
    dbt.config(materialized="table")
    key = release_key(dbt.this, dbt.config.get("sqlanon_run_key"))
    return dp_query(session, dbt.ref("adult_typed"), Histogram("sex", ["Female", "Male"]),
                    epsilon=0.25, dataset="adult", release_key=key)
