{#
  A privacy gate: `sql` is the gate's SELECT, compiled by sqlanon for this adapter, which returns the
  worst failing class (one row, with a message column) or nothing. When it finds a row, the message is
  logged with the tested model's name and the test returns that row, so it fails (severity, warn_if
  and store_failures apply as to any test); when it finds none, the test runs no second query.
#}
{% macro gate(model, sql, message_column) %}
  {{ return(adapter.dispatch('gate', 'sqlanon')(model, sql, message_column)) }}
{% endmacro %}

{% macro default__gate(model, sql, message_column) %}
  {%- if not execute -%}
    {{ return(sql) }}
  {%- endif -%}
  {%- set found = run_query(sql) -%}
  {%- if found.rows | length > 0 -%}
    {%- do log("sqlanon: privacy gate failed: model " ~ model.identifier ~ " "
               ~ found.rows[0][message_column], info=True) -%}
    {{ return(sql) }}
  {%- endif -%}
  {{ return(sqlanon.no_rows()) }}
{% endmacro %}

{% macro no_rows() %}
  {{ return(adapter.dispatch('no_rows', 'sqlanon')()) }}
{% endmacro %}

{% macro default__no_rows() %}
  {{ return("select 1 as passed where 1 = 0") }}
{% endmacro %}
