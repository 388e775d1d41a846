{#
  A privacy gate: `sql` is the gate's SELECT, compiled by sqlanon for this adapter, which returns the
  worst failing class (a row with a message column; the one gate of all models, a row per failing
  model) or nothing. When it finds rows, each message is logged with the tested model's name and the test returns that row, so it fails (severity, warn_if
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
    {%- for row in found.rows -%}
      {%- do log("sqlanon: privacy gate failed: model " ~ model.identifier ~ " "
                 ~ row[message_column], info=True) -%}
    {%- endfor -%}
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

{#
  A generic test of this package (generic_tests.sql) with its arguments: its SQL was compiled by
  `sqlanon dbt gates` into the project as the macro sqlanon_gate_<key> (which dispatches to the
  adapter's SQL), the key being the MD5 of the JSON of the test's name and its arguments (without the
  ones left out). The macro is looked up by name: dbt's parser needs a constant name in dispatch.
#}
{% macro generic_gate(model, test, arguments, source_model) %}
  {%- if not execute -%}
    {{ return("select 1 as passed where 1 = 0") }}
  {%- endif -%}
  {%- set given = {} -%}
  {%- for name, value in arguments.items() if value is not none -%}
    {%- do given.update({name: value}) -%}
  {%- endfor -%}
  {%- set key = local_md5(tojson({'test': test, 'arguments': given}, sort_keys=True)) -%}
  {%- set compiled = context.get('sqlanon_gate_' ~ key) -%}
  {%- if compiled is none -%}
    {{ exceptions.raise_compiler_error("sqlanon." ~ test ~ " on " ~ model ~ ": no SQL was generated for the arguments "
       ~ tojson(given, sort_keys=True) ~ "; run `sqlanon dbt gates --project .` after adding or changing a sqlanon test") }}
  {%- endif -%}
  {{ return(sqlanon.gate(model, compiled(model, source_model), '__sa_message')) }}
{% endmacro %}
