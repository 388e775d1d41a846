-- A view over the anonymized rows and the youngest raw row: that row's values are rare among the
-- generalized ones, and reach the view's readers unsuppressed.
{{ config(materialized='view') }}
{%- set columns = ['sex', 'age', 'race', 'education', 'salary-class'] %}
select * from {{ ref('adult_anon') }}
union all
select * from (
  select {% for c in columns %}{{ adapter.quote(c) }}{{ ", " if not loop.last }}{% endfor %}
  from {{ source('raw', 'adult') }}
  order by cast({{ adapter.quote('age') }} as integer),
    {% for c in columns if c != 'age' %}{{ adapter.quote(c) }}{{ ", " if not loop.last }}{% endfor %}
  limit 1
) as youngest
