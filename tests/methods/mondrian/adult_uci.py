"""The UCI Adult file loaded as the published Mondrian figures were computed: lines holding ``?``
skipped, spaces deleted, categorical quasi-identifiers coded by first appearance."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv

QIS = ["age", "workclass", "education_num", "marital_status", "occupation", "race", "sex", "native_country"]
COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
           "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
           "income"]
NUMERIC = ("age", "education_num")

REFERENCE = [  # k, mode, partitions, NCP %, discernibility, smallest partition
    (2, "strict", 7213, 4.973197548336696, 426728, 2),
    (5, "strict", 3271, 8.302539814157049, 502940, 5),
    (10, "strict", 1795, 11.243516821160817, 673672, 10),
    (25, "strict", 776, 16.349277910377516, 1290052, 25),
    (50, "strict", 402, 22.15773330193049, 2405520, 50),
    (100, "strict", 205, 30.08578056495158, 4654210, 101),
    (2, "relaxed", 13735, 3.5434156229583493, 68518, 2),
    (5, "relaxed", 4096, 10.639442550852959, 223054, 7),
    (10, "relaxed", 2048, 15.847012477167269, 444618, 14),
    (25, "relaxed", 1024, 22.318307568267294, 888678, 29),
    (50, "relaxed", 512, 30.072664109680574, 1776890, 58),
    (100, "relaxed", 256, 38.94078062352769, 3553734, 117),
]


def load(path: Path) -> pa.Table:
    """The quasi-identifiers as integers, plus ``income`` (text), in file order."""
    codes: dict[str, dict[str, int]] = {c: {} for c in QIS}
    data: dict[str, list] = {c: [] for c in [*QIS, "income"]}
    with open(path) as f:
        for line in f:
            if not line.strip() or "?" in line:
                continue
            row = dict(zip(COLUMNS, line.replace(" ", "").strip().split(",")))
            for c in QIS:
                v = row[c]
                data[c].append(int(v) if c in NUMERIC else codes[c].setdefault(v, len(codes[c])))
            data["income"].append(row["income"])
    return pa.table({**{c: pa.array(data[c], pa.int64()) for c in QIS}, "income": pa.array(data["income"])})


def read(path: Path) -> pa.Table:
    """What :func:`load` returns, read by pyarrow's CSV reader (a few times faster): categorical codes
    by first appearance are the indices of a dictionary encoding."""
    data = csv.read_csv(path, read_options=csv.ReadOptions(column_names=COLUMNS),
                        parse_options=csv.ParseOptions(quote_char=False),
                        convert_options=csv.ConvertOptions(column_types=dict.fromkeys(COLUMNS, pa.string())))
    unknown = None
    for c in COLUMNS:
        has = pc.match_substring(data.column(c), "?")
        unknown = has if unknown is None else pc.or_(unknown, has)
    if unknown is not None:
        data = data.filter(pc.invert(unknown))
    out = {}
    for c in [*QIS, "income"]:
        values = pc.replace_substring(data.column(c), " ", "")
        if c in NUMERIC:
            out[c] = pc.cast(values, pa.int64())
        elif c in QIS:
            out[c] = pc.cast(pc.dictionary_encode(values).combine_chunks().indices, pa.int64())
        else:
            out[c] = values
    return pa.table(out).combine_chunks()


def spec_dict(k: int, mode: str, width: str = "inherited", table: str = "adult_uci") -> dict:
    return {"source": {"table": table},
            "attributes": {**{q: {"role": "quasi_identifier"} for q in QIS},
                           "income": {"role": "insensitive"}},
            "privacy": [{"k_anonymity": {"k": k}}],
            "transformation": {"method": "mondrian", "mode": mode, "width": width},
            "output": {"mode": "none"}}
