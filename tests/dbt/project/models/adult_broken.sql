-- The anonymized rows without the men, and the two youngest raw rows: classes below k (without the
-- diversity the models ask for) and more rows missing than the suppression limit allows.
select * from {{ ref('adult_anon') }} where "sex" <> 'Male'
union all
select * from (
  select "sex", "age", "race", "education", "salary-class" from {{ source('raw', 'adult') }}
  order by cast("age" as integer), "sex", "race", "education", "salary-class" limit 2
) as youngest
