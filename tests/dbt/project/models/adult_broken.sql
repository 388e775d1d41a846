-- The anonymized rows without the men, and the two youngest raw rows: classes below k (without the
-- diversity the models ask for) and more rows missing than the suppression limit allows.
{%- set columns = ['sex', 'age', 'race', 'education', 'salary-class'] %}
select * from {{ ref('adult_anon') }} where {{ adapter.quote('sex') }} <> 'Male'
union all
select * from (
  select {% for c in columns %}{{ adapter.quote(c) }}{{ ", " if not loop.last }}{% endfor %}
  from {{ source('raw', 'adult') }}
  order by cast({{ adapter.quote('age') }} as integer),
    {% for c in columns if c != 'age' %}{{ adapter.quote(c) }}{{ ", " if not loop.last }}{% endfor %}
  limit 2
) as youngest
