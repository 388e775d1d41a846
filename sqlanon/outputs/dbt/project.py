"""A dbt project on disk: its adapter's dialect, where models and macros go, writing or checking the
generated files, and the ``packages.yml`` entry of sqlanon's dbt package."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from sqlanon.errors import SpecError

ADAPTER_DIALECTS = {"duckdb": "duckdb", "postgres": "postgres", "snowflake": "snowflake",
                    "bigquery": "bigquery", "trino": "trino", "spark": "spark", "databricks": "spark"}
"""dbt adapter type -> the sqlanon dialect its SQL is compiled for."""


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise SpecError("not found: give the folder of a dbt project (the one holding dbt_project.yml)",
                        source=str(path)) from None
    except yaml.YAMLError as e:
        raise SpecError(f"not valid YAML ({' '.join(str(e).split())})", source=str(path)) from None


def project_settings(project: Path) -> dict[str, Any]:
    data = _yaml(project / "dbt_project.yml")
    if not isinstance(data, dict):
        raise SpecError("must be a mapping", source=str(project / "dbt_project.yml"))
    return data


def profiles_file(project: Path, profiles_dir: str | None) -> Path:
    """profiles.yml where dbt looks for it: --profiles-dir, DBT_PROFILES_DIR, the working directory
    (dbt's own order), then the project and ~/.dbt."""
    for folder in (profiles_dir, os.environ.get("DBT_PROFILES_DIR"), Path.cwd(), project,
                   Path.home() / ".dbt"):
        if folder is not None and (Path(folder) / "profiles.yml").is_file():
            return Path(folder) / "profiles.yml"
    raise SpecError("no profiles.yml in --profiles-dir, DBT_PROFILES_DIR, the project or ~/.dbt; "
                    "give the dialect with --dialect", source=str(project))


def adapter_dialect(project: Path, *, profiles_dir: str | None = None, target: str | None = None) -> str:
    """The sqlanon dialect of the adapter the project's profile uses (its target's ``type``)."""
    profile = project_settings(project).get("profile")
    if not isinstance(profile, str):
        raise SpecError("names no profile; give the dialect with --dialect",
                        source=str(project / "dbt_project.yml"))
    path = profiles_file(project, profiles_dir)
    profiles = _yaml(path)
    entry = profiles.get(profile) if isinstance(profiles, dict) else None
    if not isinstance(entry, dict):
        raise SpecError(f"has no profile {profile!r} (named by dbt_project.yml)", source=str(path))
    name = target or entry.get("target")
    outputs = entry.get("outputs") or {}
    output = outputs.get(name) if isinstance(outputs, dict) else None
    if not isinstance(output, dict):
        raise SpecError(f"profile {profile!r} has no output {name!r}", path=f"{profile}.outputs",
                        source=str(path))
    kind = output.get("type")
    if kind not in ADAPTER_DIALECTS:
        raise SpecError(f"adapter type {kind!r} has no sqlanon dialect (known: "
                        f"{', '.join(ADAPTER_DIALECTS)}); give one with --dialect",
                        path=f"{profile}.outputs.{name}.type", source=str(path))
    return ADAPTER_DIALECTS[kind]


def _first_path(project: Path, key: str, default: str) -> Path:
    paths = project_settings(project).get(key) or [default]
    return project / str(paths[0])


def model_paths(project: Path, name: str) -> dict[str, Path]:
    """Where the model, its properties and its gates' macros go."""
    models = _first_path(project, "model-paths", "models")
    macros = _first_path(project, "macro-paths", "macros")
    return {"model": models / f"{name}.sql", "properties": models / f"{name}.yml",
            "macros": macros / f"sqlanon_{name}_gates.sql"}


def model_folders(project: Path) -> list[Path]:
    """The folders holding the project's models and their properties files."""
    paths = project_settings(project).get("model-paths") or ["models"]
    return [project / str(p) for p in paths]


def generic_macros_path(project: Path) -> Path:
    return _first_path(project, "macro-paths", "macros") / "sqlanon_generic_gates.sql"


def stale_files(files: dict[Path, str]) -> list[Path]:
    """The files whose text differs from what would be written now (or that are missing)."""
    return [p for p, text in files.items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text]


def write_files(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def package_folder() -> Path:
    """sqlanon's dbt package, as installed with sqlanon."""
    return Path(str(resources.files("sqlanon") / "dbt_package"))


def install_package(project: Path) -> Path:
    """Add sqlanon's dbt package to the project's ``packages.yml`` (a ``local:`` entry); ``dbt deps``
    then installs it. An entry already there is replaced (sqlanon may have moved)."""
    project_settings(project)  # a dbt project
    path = project / "packages.yml"
    data = _yaml(path) if path.is_file() else {}
    if not isinstance(data, dict) or not isinstance(data.get("packages") or [], list):
        raise SpecError("must map `packages` to a list", source=str(path))
    folder = str(package_folder())
    kept = [p for p in data.get("packages") or []
            if not (isinstance(p, dict) and str(p.get("local", "")).rstrip("/").endswith("dbt_package")
                    and Path(str(p["local"])).joinpath("dbt_project.yml").is_file()
                    and project_name(Path(str(p["local"]))) == "sqlanon")]
    data["packages"] = [*kept, {"local": folder}]
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def project_name(folder: Path) -> str | None:
    name = project_settings(folder).get("name")
    return name if isinstance(name, str) else None
