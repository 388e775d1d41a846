-- Reads the broken model: its failing gates must keep this model from being built.
select count(*) as n from {{ ref('adult_broken') }}
