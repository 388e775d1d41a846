-- The raw rows as a model of their own, gated like the anonymized one: every gate must fail here.
select * from {{ source('raw', 'adult') }}
