{# Generated from sqlanon's privacy models (sqlanon.outputs.dbt.generic.package_tests_text); the tests' SQL is written into the project by `sqlanon dbt gates`. #}

{% test alpha_k_anonymity(model, quasi_identifiers, attribute, alpha, k) %}
{{ sqlanon.generic_gate(model, 'alpha_k_anonymity', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'alpha': alpha, 'k': k}, none) }}
{% endtest %}

{% test average_risk(model, quasi_identifiers, threshold, highest_risk=none, records_at_risk=none) %}
{{ sqlanon.generic_gate(model, 'average_risk', {'quasi_identifiers': quasi_identifiers, 'threshold': threshold, 'highest_risk': highest_risk, 'records_at_risk': records_at_risk}, none) }}
{% endtest %}

{% test beta_likeness(model, quasi_identifiers, attribute, beta, variant=none) %}
{{ sqlanon.generic_gate(model, 'beta_likeness', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'beta': beta, 'variant': variant}, none) }}
{% endtest %}

{% test delta_disclosure(model, quasi_identifiers, attribute, delta) %}
{{ sqlanon.generic_gate(model, 'delta_disclosure', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'delta': delta}, none) }}
{% endtest %}

{% test k_anonymity(model, quasi_identifiers, k) %}
{{ sqlanon.generic_gate(model, 'k_anonymity', {'quasi_identifiers': quasi_identifiers, 'k': k}, none) }}
{% endtest %}

{% test k_e_anonymity(model, quasi_identifiers, attribute, k, e) %}
{{ sqlanon.generic_gate(model, 'k_e_anonymity', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'k': k, 'e': e}, none) }}
{% endtest %}

{% test k_map(model, quasi_identifiers, k, population=none, estimator=none, significance=none, population_size=none, sampling_fraction=none) %}
{{ sqlanon.generic_gate(model, 'k_map', {'quasi_identifiers': quasi_identifiers, 'k': k, 'population': population, 'estimator': estimator, 'significance': significance, 'population_size': population_size, 'sampling_fraction': sampling_fraction}, none) }}
{% endtest %}

{% test kpqr_anonymity(model, quasi_identifiers, attribute, k, p, q, r) %}
{{ sqlanon.generic_gate(model, 'kpqr_anonymity', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'k': k, 'p': p, 'q': q, 'r': r}, none) }}
{% endtest %}

{% test l_diversity(model, quasi_identifiers, attribute, l, variant=none, c=none) %}
{{ sqlanon.generic_gate(model, 'l_diversity', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'l': l, 'variant': variant, 'c': c}, none) }}
{% endtest %}

{% test p_sensitive_k_anonymity(model, quasi_identifiers, attribute, k, p) %}
{{ sqlanon.generic_gate(model, 'p_sensitive_k_anonymity', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 'k': k, 'p': p}, none) }}
{% endtest %}

{% test population_uniqueness(model, quasi_identifiers, threshold, population_size=none, sampling_fraction=none, estimator=none) %}
{{ sqlanon.generic_gate(model, 'population_uniqueness', {'quasi_identifiers': quasi_identifiers, 'threshold': threshold, 'population_size': population_size, 'sampling_fraction': sampling_fraction, 'estimator': estimator}, none) }}
{% endtest %}

{% test sample_uniqueness(model, quasi_identifiers, threshold) %}
{{ sqlanon.generic_gate(model, 'sample_uniqueness', {'quasi_identifiers': quasi_identifiers, 'threshold': threshold}, none) }}
{% endtest %}

{% test t_closeness(model, quasi_identifiers, attribute, t, distance=none, order=none) %}
{{ sqlanon.generic_gate(model, 't_closeness', {'quasi_identifiers': quasi_identifiers, 'attribute': attribute, 't': t, 'distance': distance, 'order': order}, none) }}
{% endtest %}

{% test suppression_limit(model, quasi_identifiers, share, source_model) %}
{{ sqlanon.generic_gate(model, 'suppression_limit', {'quasi_identifiers': quasi_identifiers, 'share': share}, source_model) }}
{% endtest %}

{% test no_rare_values(model, quasi_identifiers, k) %}
{{ sqlanon.generic_gate(model, 'no_rare_values', {'quasi_identifiers': quasi_identifiers, 'k': k}, none) }}
{% endtest %}
