-- The anonymized rows as released downstream, checked by the package's generic tests.
select * from {{ ref('adult_anon') }}
