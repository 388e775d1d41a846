select *, cast(age as integer) as age_years from {{ source('raw', 'adult') }}
