"""The SQL vocabulary every layer speaks: sqlglot node helpers, dialect profiles, the one render step."""
