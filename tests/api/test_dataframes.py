"""The Python API on tables in memory: pandas and polars DataFrames, Arrow tables and readers.

Each method runs on the data registered in an embedded DuckDB and must give exactly what the same
spec gives on the existing file path (the same rows in a Parquet file), returned as the kind that came
in, with the types of the columns it does not transform (integers, floats, strings, dates, NULLs) intact.
"""

from __future__ import annotations

import copy
import datetime
import warnings

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pytest

import sqlanon
from sqlanon.engines.duckdb import DuckDBEngine
from sqlanon.engines.frames import in_memory_table
from sqlanon.errors import SpecError, UnsupportedError
from sqlanon.methods.rng import ReproducibleNoiseWarning

ZIP = 'zip "code"'
AGE = "âge"
BIRTH = "birth date"
NOTE = "note; it's"
N = 60


def source_table() -> pa.Table:
    """60 people; every column type the output must carry, NULLs in each column that allows them."""
    days = datetime.date(1960, 1, 1)
    return pa.table({
        "id": pa.array(range(1, N + 1), pa.int64()),
        ZIP: pa.array([None if i == 7 else f"476{i % 4}{i % 10}" for i in range(N)], pa.string()),
        AGE: pa.array([None if i % 13 == 5 else 20 + i % 45 for i in range(N)], pa.int64()),
        BIRTH: pa.array([None if i % 11 == 3 else days + datetime.timedelta(days=97 * i) for i in range(N)],
                        pa.date32()),
        "income": pa.array([1000.0 + 137.5 * (i * 7 % N) for i in range(N)], pa.float64()),
        "weight": pa.array([50.0 + (i * 11 % 37) for i in range(N)], pa.float64()),
        "spend": pa.array([None if i % 10 == 0 else 10.25 * i for i in range(N)], pa.float64()),
        "visits": pa.array([None if i % 9 == 0 else i % 6 for i in range(N)], pa.int64()),
        NOTE: pa.array([None if i % 8 == 0 else f"Zoë \"{i}\"; it's 🙂" for i in range(N)], pa.string()),
    })


ATTRIBUTES = {
    "id": {"role": "insensitive"},
    ZIP: {"role": "quasi_identifier", "hierarchy": {"mask": {"levels": 5}}},
    AGE: {"role": "quasi_identifier", "type": "integer",
          "hierarchy": {"intervals": {"widths": [10, 20], "bottom": 0, "top": 100}}},
    BIRTH: {"role": "quasi_identifier", "type": "date", "hierarchy": {"date": ["year", "decade"]}},
    "income": {"role": "insensitive"},
    "weight": {"role": "insensitive"},
    "spend": {"role": "insensitive"},
    "visits": {"role": "sensitive"},
    NOTE: {"role": "insensitive"},
}
UNTOUCHED = ["id", "income", "weight", "spend", "visits", NOTE]
"""Columns every method below passes through unchanged."""


def generalization() -> dict:
    return {"attributes": copy.deepcopy(ATTRIBUTES), "privacy": [{"k_anonymity": {"k": 3}}],
            "transformation": {"levels": {ZIP: 3, AGE: 2, BIRTH: 2}, "suppression_limit": 0.2}}


def search() -> dict:
    spec = generalization()
    spec["transformation"] = {"search": "optimal", "suppression_limit": 0.1}
    return spec


def microaggregation() -> dict:
    attributes = copy.deepcopy(ATTRIBUTES)
    for name in (ZIP, AGE, BIRTH):
        attributes[name] = {"role": "insensitive"}
    attributes["income"] = {"role": "quasi_identifier"}
    attributes["weight"] = {"role": "quasi_identifier"}
    return {"attributes": attributes,
            "transformation": {"method": "microaggregation", "algorithm": "mdav", "k": 4, "key": "id"}}


def noise() -> dict:
    attributes = copy.deepcopy(ATTRIBUTES)
    for name in (ZIP, AGE, BIRTH):
        attributes[name] = {"role": "insensitive"}
    attributes["spend"] = {"role": "sensitive"}
    attributes["income"] = {"role": "sensitive"}
    return {"attributes": attributes,
            "transformation": {"method": "noise", "mechanism": "correlated",
                               "attributes": ["income", "spend"], "alpha": 0.5, "seed": 11}}


METHODS = {"generalization": ("apply", generalization), "search": ("anonymize", search),
           "microaggregation": ("apply", microaggregation), "noise": ("apply", noise)}
TRANSFORMED = {"generalization": [ZIP, AGE, BIRTH], "search": [ZIP, AGE, BIRTH],
               "microaggregation": ["income", "weight"], "noise": ["income", "spend"]}


def as_kind(kind: str, data: pa.Table):
    if kind == "pandas":
        frame = data.to_pandas()
        frame["visits"] = frame["visits"].astype("Int64")  # a nullable integer dtype must survive
        return frame
    if kind == "polars":
        return pl.from_arrow(data)
    if kind == "reader":
        return pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=16))
    return data


def arrow_of(result) -> pa.Table:
    if isinstance(result, pd.DataFrame):
        return pa.Table.from_pandas(result, preserve_index=False)
    if isinstance(result, pl.DataFrame):
        return result.to_arrow()
    if isinstance(result, pa.RecordBatchReader):
        return result.read_all()
    return result


def rows(data: pa.Table) -> list[tuple]:
    """The rows in id order, values as Python objects (NULL as None, NaN refused by the data)."""
    ordered = data.sort_by("id")
    return list(zip(*(ordered.column(c).to_pylist() for c in ordered.column_names)))


def kept(out: pa.Table) -> pa.Table:
    """The source's rows whose ids are in ``out``."""
    source = source_table()
    return source.filter(pa.compute.is_in(source.column("id"), out.column("id")))


def quietly(verb, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return getattr(sqlanon, verb)(*args, **kwargs)


def on_a_file(verb: str, spec: dict, folder) -> tuple[pa.Table | None, object]:
    """The output and report of the same spec on the existing file path: the source's rows in a
    Parquet file, loaded into an in-memory DuckDB."""
    import pyarrow.parquet as pq

    path = folder / "people.parquet"
    pq.write_table(source_table(), path)
    engine = DuckDBEngine()
    try:
        spec = {**spec, "source": {"file": str(path)}}
        report = quietly(verb, sqlanon.spec_from_dict(spec), engine=engine)
        if verb == "check":
            return None, report
        return engine.con.sql("SELECT * FROM people_anon").to_arrow_table(), report
    finally:
        engine.close()


def to_last_bits(value):
    """Floats to 12 significant digits, in nested figures: SQL sums doubles in no set order, so
    threads may change the last bit of a figure from one run to the next."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: to_last_bits(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_last_bits(v) for v in value)
    return value


def comparable(report) -> dict:
    """A report's figures, without where the output went and how long the search took."""
    found = report.as_dict()
    found.pop("outputs", None)
    if "search" in found:
        found["search"] = {k: v for k, v in found["search"].items()
                           if "seconds" not in k and k != "wall_time"}
    return to_last_bits(found)


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> dict[str, tuple[pa.Table, object]]:
    folder = tmp_path_factory.mktemp("file_path")
    return {method: on_a_file(verb, make(), folder) for method, (verb, make) in METHODS.items()}


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "reader"])
@pytest.mark.parametrize("method", list(METHODS))
def test_each_method_gives_what_it_gives_on_a_file(method, kind, expected):
    verb, make = METHODS[method]
    result = quietly(verb, make(), data=as_kind(kind, source_table()))
    out, report = result
    assert isinstance(result, sqlanon.Result)
    assert out is result.data and report is result.report
    assert type(out) is type(as_kind(kind, source_table()))
    want, want_report = expected[method]
    got = arrow_of(out)
    assert got.column_names == want.column_names
    assert rows(got) == rows(want)
    assert comparable(report) == comparable(want_report)
    if method != "search":  # the search keeps the original values of this small table
        columns = ["id", *TRANSFORMED[method]]
        assert rows(got.select(columns)) != rows(kept(got).select(columns)), \
            "the method changed nothing: the comparison above would prove little"


def test_arrow_types_and_nulls_of_untouched_columns_survive():
    out, _ = sqlanon.apply(generalization(), data=source_table())
    assert out.schema.field(BIRTH).type == pa.string()  # generalized: a label
    for name in UNTOUCHED:
        assert out.schema.field(name).type == source_table().schema.field(name).type, name
    assert rows(out.select(UNTOUCHED)) == rows(kept(out).select(UNTOUCHED))
    assert out.column("spend").null_count > 0 and out.column(NOTE).null_count > 0


def test_pandas_dtypes_survive():
    frame = as_kind("pandas", source_table())
    spec = generalization()
    spec["attributes"][BIRTH] = {"role": "insensitive"}
    spec["transformation"]["levels"].pop(BIRTH)
    out, _ = sqlanon.apply(spec, data=frame)
    assert isinstance(out, pd.DataFrame)
    for name in ["id", "income", "spend", "visits", BIRTH, NOTE]:
        assert out[name].dtype == frame[name].dtype, name
    assert str(out["visits"].dtype) == "Int64" and out["visits"].isna().any()
    by_id = out.set_index("id")
    original = frame.set_index("id").loc[by_id.index]
    assert by_id[BIRTH].tolist() == original[BIRTH].tolist()  # datetime.date objects, None kept
    assert isinstance(by_id[BIRTH].dropna().iloc[0], datetime.date)
    pd.testing.assert_series_equal(by_id[NOTE], original[NOTE])
    pd.testing.assert_series_equal(by_id["spend"], original["spend"])  # NaN where NULL


def test_pandas_arrow_backed_and_nullable_dtypes_survive():
    frame = pd.DataFrame({
        "k": pd.Series(["a", "b", "a", "b"], dtype="string[pyarrow]"),
        "s": pd.Series(["x", None, "zö", 'w"'], dtype="string[pyarrow]"),
        "p": pd.Series(["x", None, "z", "w"], dtype="string[python]"),
        "i": pd.Series([1, None, 3, 4], dtype="int64[pyarrow]"),
        "d": pd.Series([1.5, None, 2.0, 3.0], dtype=pd.ArrowDtype(pa.float64())),
        "l": pd.Series(["x", None, "z", "w"], dtype=pd.ArrowDtype(pa.large_string())),
        "b": pd.Series([True, None, False, True], dtype="boolean"),
    })
    spec = {"attributes": {"k": {"role": "quasi_identifier", "hierarchy": {"map": {"a": ["*"], "b": ["*"]}}}},
            "privacy": [{"k_anonymity": {"k": 2}}]}
    out, _ = sqlanon.apply(spec, data=frame)
    assert out.dtypes.to_dict() == frame.dtypes.to_dict()
    pd.testing.assert_frame_equal(out.sort_values("i").reset_index(drop=True),
                                  frame.sort_values("i").reset_index(drop=True))


def test_polars_dtypes_survive():
    frame = pl.from_arrow(source_table())
    spec = generalization()
    spec["attributes"][BIRTH] = {"role": "insensitive"}
    spec["transformation"]["levels"].pop(BIRTH)
    out, _ = sqlanon.apply(spec, data=frame)
    assert isinstance(out, pl.DataFrame)
    for name in ["id", "income", "spend", "visits", BIRTH, NOTE]:
        assert out.schema[name] == frame.schema[name], name
    joined = out.select(["id", BIRTH, NOTE, "spend"]).join(frame, on="id", suffix="_in")
    for name in [BIRTH, NOTE, "spend"]:
        assert joined[name].equals(joined[f"{name}_in"]), name
    assert joined[BIRTH].null_count() > 0


def test_check_on_data_returns_the_report_of_the_table(tmp_path):
    want = on_a_file("check", generalization(), tmp_path)[1]
    got = sqlanon.check(generalization(), data=pl.from_arrow(source_table()))
    assert got.as_dict() == want.as_dict()


def test_microaggregation_check_on_data(tmp_path):
    want = on_a_file("check", microaggregation(), tmp_path)[1]
    got = sqlanon.check(microaggregation(), data=source_table().to_pandas())
    assert got.as_dict() == want.as_dict()


def test_a_spec_file_without_source_and_a_named_source(tmp_path):
    import yaml

    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(generalization(), allow_unicode=True), encoding="utf-8")
    out, report = sqlanon.apply(str(path), data=source_table())
    assert report.outputs["relation"] == "data_anon"
    named = {**generalization(), "source": {"table": 'my "people"'}}
    again, report = sqlanon.apply(named, data=source_table())
    assert report.outputs["relation"] == 'my "people"_anon'
    assert rows(again) == rows(out)
    spec = sqlanon.spec_from_dict({**generalization(), "source": {"table": "people"}})
    assert rows(sqlanon.apply(spec, data=source_table()).data) == rows(out)


def test_dry_run_and_mode_none_return_no_data():
    result = sqlanon.apply(generalization(), data=source_table(), dry_run=True)
    assert result.data is None and result.report.anonymous
    result = sqlanon.apply({**generalization(), "output": {"mode": "none"}}, data=source_table())
    assert result.data is None and result.report.outputs == {"mode": "none"}


@pytest.mark.parametrize("mode", ["view", "in_place", "sql"])
def test_modes_that_write_into_a_database_are_refused(mode):
    spec = {**generalization(), "output": {"mode": mode}}
    with pytest.raises(SpecError) as caught:
        sqlanon.apply(spec, data=source_table())
    message = str(caught.value)
    assert message.startswith("output.mode: in-memory data comes back to the caller")
    assert f"mode {mode} writes into a database" in message and "\n" not in message


@pytest.mark.parametrize("source, path", [
    ({"file": "people.csv"}, "source.file"),
    ({"table": "people", "database": "people.duckdb"}, "source.database"),
    ({"table": "people", "schema": "main"}, "source.schema"),
])
def test_sources_that_name_where_data_is_are_refused(source, path):
    with pytest.raises(SpecError) as caught:
        sqlanon.check({**generalization(), "source": source}, data=source_table())
    assert caught.value.path == path and "\n" not in str(caught.value)


def test_an_output_database_is_refused():
    with pytest.raises(SpecError, match=r"^output\.database: in-memory data comes back to the caller"):
        sqlanon.apply({**generalization(), "output": {"database": "out.duckdb"}}, data=source_table())


def test_an_engine_or_database_beside_data_is_refused(duck):
    for where in ({"engine": duck}, {"database": ":memory:"}):
        with pytest.raises(UnsupportedError, match="leave out engine and database$"):
            sqlanon.check(generalization(), data=source_table(), **where)


def test_objects_that_are_not_tables_are_refused():
    with pytest.raises(UnsupportedError, match=r"^data: a builtins\.list is not a table sqlanon reads; "
                                               r"give a pandas DataFrame, a polars DataFrame"):
        sqlanon.check(generalization(), data=[{"id": 1}])
    with pytest.raises(UnsupportedError, match=r"collect\(\) it first"):
        sqlanon.check(generalization(), data=pl.from_arrow(source_table()).lazy())


def test_a_named_pandas_index_is_refused_rather_than_lost():
    frame = source_table().to_pandas().set_index("id")
    with pytest.raises(SpecError,
                       match=r"^data: the DataFrame's index 'id' is not a column and would be lost"):
        sqlanon.apply(generalization(), data=frame)
    filtered = source_table().to_pandas().iloc[::-1]  # an unnamed index is row bookkeeping: dropped
    out, _ = sqlanon.apply(generalization(), data=filtered)
    assert rows(arrow_of(out)) == rows(sqlanon.apply(generalization(), data=source_table()).data)


def test_column_names_must_be_distinct_text():
    twice = pa.table({"id": [1], "ID": [2]})
    with pytest.raises(SpecError, match=r"^data: column 'ID' appears twice"):
        in_memory_table(twice)
    with pytest.raises(SpecError, match=r"^data: column 'x' appears twice"):
        in_memory_table(pd.DataFrame([[1, 2]], columns=["x", "x"]))
    with pytest.raises(SpecError, match=r"^data: column names must be text, got 0"):
        in_memory_table(pd.DataFrame({0: [1]}))


def test_an_undeclared_column_name_is_reported_against_the_data():
    spec = generalization()
    spec["attributes"]["agee"] = spec["attributes"].pop(AGE)
    spec["transformation"]["levels"] = {ZIP: 3, "agee": 2, BIRTH: 2}
    with pytest.raises(SpecError, match=r"^attributes\.agee: unknown column 'agee' in 'data'"):
        sqlanon.check(spec, data=source_table())


def test_registration_copies_no_data():
    """The Arrow buffers DuckDB scans are the input's own: the same addresses, not copies."""
    arrow = source_table()
    assert in_memory_table(arrow).arrow is arrow
    numbers = pd.DataFrame({"x": pd.Series(range(1000), dtype="int64"), "y": [0.5] * 1000,
                            "s": pd.Series([f"v{i}" for i in range(1000)], dtype="string[pyarrow]")})
    registered = in_memory_table(numbers).arrow
    assert registered.column("x").chunks[0].buffers()[1].address == numbers["x"].to_numpy().ctypes.data
    assert registered.column("y").chunks[0].buffers()[1].address == numbers["y"].to_numpy().ctypes.data
    strings = pa.chunked_array(numbers["s"].array._pa_array)
    assert registered.column("s").chunks[0].buffers()[2].address == strings.chunks[0].buffers()[2].address
    frame = pl.DataFrame({"x": list(range(1000)), "s": [f"v{i}" for i in range(1000)]})
    registered = in_memory_table(frame).arrow
    numbers = frame["x"].to_numpy(allow_copy=False)
    assert registered.column("x").chunks[0].buffers()[1].address == numbers.ctypes.data
    assert registered.schema.field("s").type == pa.string_view()  # polars' own layout, handed over


def test_arrow_data_needs_neither_pandas_nor_polars():
    """The package imports neither; here neither can be imported at all."""
    import subprocess
    import sys

    code = ("import sys\n"
            "class Absent:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('pandas', 'polars'):\n"
            "            raise ModuleNotFoundError(name, name=name)\n"
            "sys.meta_path.insert(0, Absent())\n"
            "import pyarrow as pa, sqlanon\n"
            "spec = {'attributes': {'x': {'role': 'quasi_identifier',\n"
            "                             'hierarchy': {'intervals': {'widths': [10]}}}},\n"
            "        'privacy': [{'k_anonymity': {'k': 2}}], 'transformation': {'levels': {'x': 1}}}\n"
            "out, report = sqlanon.apply(spec, data=pa.table({'x': [1, 2, 13, 14]}))\n"
            "print(sorted(out.column('x').to_pylist()))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['[0, 10)', '[0, 10)', '[10, 20)', '[10, 20)']"


def test_a_spec_mapping_or_path_serves_a_table_source_too(duck, tmp_path):
    """The verbs take the same spec forms with and without data: a mapping, a path, a ``Path``."""
    import yaml

    duck.con.register("people_arrow", source_table())
    duck.con.execute("CREATE TABLE people AS SELECT * FROM people_arrow")
    spec = {**generalization(), "source": {"table": "people"}}
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    want = sqlanon.check(generalization(), data=source_table()).as_dict()
    for given in (spec, path, str(path)):
        assert sqlanon.check(given, engine=duck).as_dict() == want
