"""The only package that builds SQL. Everything stays a sqlglot tree until :func:`render`."""
