{{ config(materialized="table") }}
-- a model after the releases that fails when the var fail_after_release is true
select count(*) as rows_released from {{ ref('adult_dp') }}
{% if var('fail_after_release', false) %} where error('a later step of the pipeline failed') is null {% endif %}
