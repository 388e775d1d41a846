#!/usr/bin/env bash
# Install sqlanon with its test, lint and Spark extras (pyspark and its Spark Connect client),
# PostgreSQL 15 for the server tests and a Java 17 runtime for the Spark tests, each when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test,lint,spark]"

# apt_install PACKAGE WHAT: install a Debian package when running as root with apt-get, else say what is missing.
apt_updated=""
apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing $1 for $2" >&2
    if [ -z "$apt_updated" ]; then apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
  else
    echo "$2: install $1 (Debian) to run them" >&2
  fi
}

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt_install postgresql-15 "the PostgreSQL server tests"
fi
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1; }
if ! command -v java >/dev/null || [ "$(java_major)" -lt 17 ]; then
  apt_install openjdk-17-jre-headless "the Spark tests (Java 17)"
fi
if ! command -v chromium >/dev/null; then
  apt_install chromium "the HTML report's browser tests (headless Chromium)"
fi
