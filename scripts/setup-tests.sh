#!/usr/bin/env bash
# Install sqlanon with its test and lint extras, and PostgreSQL 15 for the server tests when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test,lint]"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing PostgreSQL for the server tests" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
  else
    echo "PostgreSQL server binaries not found: install postgresql-15 (Debian) to run the server tests" >&2
  fi
fi
