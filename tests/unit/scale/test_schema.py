"""Writer and reader are one schema: a property test over random documents (issue 53).

A seeded generator draws results documents of every kind the format holds (floats with NaN,
infinities, -0.0 and subnormals, integers up to 2**63, numpy arrays of every supported dtype
and shape, empty ones included, numpy scalars, integer-keyed dicts, nested lists, unicode),
half of them valid and half made invalid by one of the edits in ``BREAK``. Every valid
document must be written and read back equal (with the documented conversions: float64, int64
and bool numpy scalars come back as Python numbers); every invalid one must be refused by
``write_results`` before a byte is written (no file, no temporary, a file already there left
as it was), and the reader must refuse the same document written by hand.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from twostep.scale.results import ResultsFileError, parse_document, read_results, write_results

DOCUMENTS = 400
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]
SPECIAL = [0.0, -0.0, 1.0, -2.5, 5e-324, 1.7976931348623157e308, -1e-300, float("nan"),
           float("inf"), float("-inf")]


def _float(rng):
    return float(SPECIAL[rng.integers(len(SPECIAL))]) if rng.random() < 0.4 else float(
        rng.standard_normal() * 10.0 ** rng.integers(-30, 30))


def _array(rng):
    dt = np.dtype(DTYPES[rng.integers(len(DTYPES))])
    shape = tuple(int(s) for s in rng.integers(0, 4, size=rng.integers(0, 4)))
    if dt.kind == "f":
        a = rng.standard_normal(shape).astype(dt)
        if a.size:
            a.flat[rng.integers(a.size)] = SPECIAL[rng.integers(len(SPECIAL))]
        return a
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def _value(rng, depth=0):
    kind = rng.integers(0, 11 if depth < 3 else 7)
    if kind == 0:
        return _float(rng)
    if kind == 1:
        return int(rng.integers(-2 ** 62, 2 ** 62)) * int(rng.integers(1, 3))
    if kind == 2:
        return bool(rng.random() < 0.5)
    if kind == 3:
        return None if rng.random() < 0.5 else "".join(chr(c) for c in rng.integers(32, 0x2FFF, 5))
    if kind == 4:
        return _array(rng)
    if kind == 5:
        dt = np.dtype(DTYPES[rng.integers(len(DTYPES))])
        return _array(rng).astype(dt).reshape(-1)[:1].sum(dtype=dt) if dt.kind != "b" else np.bool_(True)
    if kind == 6:
        return np.float32(_float(rng))
    if kind == 7:
        return [_value(rng, depth + 1) for _ in range(rng.integers(0, 4))]
    if kind == 8:
        return {int(k): _value(rng, depth + 1) for k in rng.integers(-5, 5, rng.integers(1, 4))}
    return {f"k{i}": _value(rng, depth + 1) for i in range(rng.integers(0, 4))}


def _document(rng) -> dict:
    """``write_results``'s arguments for a valid document."""
    grid_keys = [k for k in ("N", "batch") if rng.random() < 0.5]
    records = []
    for i in range(rng.integers(0, 4)):
        r = {"seed": int(rng.integers(0, 2 ** 63 - 1)), "N": int(rng.integers(1, 10 ** 6)),
             "batch": ["fresh", "reused"][i % 2]}
        r.update({f"x{j}": _value(rng) for j in range(rng.integers(0, 4))})
        records.append(r)
    elapsed = abs(_float(rng))
    return {"experiment": "e" + str(rng.integers(100)), "records": records,
            "params": {f"p{j}": _value(rng) for j in range(rng.integers(0, 3))},
            "grid": {k: sorted({r[k] for r in records}) or [1] for k in grid_keys} if records else {},
            "seeds": sorted({r["seed"] for r in records}),
            "elapsed": elapsed if math.isfinite(elapsed) else 1.0,
            "note": _value(rng)}


def _set_record(key, value):
    def edit(doc):
        if not doc["records"]:
            doc["records"].append({"seed": 0, "N": 1, "batch": "fresh"})
            doc["grid"] = {}
        doc["records"][0][key] = value
    return edit


#: One edit each that makes a document invalid.
BREAK = {
    "seed NaN": _set_record("seed", float("nan")),
    "seed -1": _set_record("seed", -1),
    "seed a float": _set_record("seed", 1.5),
    "seed True": _set_record("seed", True),
    "N = 0": _set_record("N", 0),
    "d a float": _set_record("d", 0.5),
    "n negative": _set_record("n", -3),
    "no seed": lambda d: _set_record("seed", 0)(d) or d["records"][0].pop("seed"),
    "a swept parameter missing": lambda d: _set_record("seed", 0)(d) or d.update(grid={"z": [1]}),
    "seeds [-1]": lambda d: d.update(seeds=[-1]),
    "seeds [1.5]": lambda d: d.update(seeds=[1.5]),
    "elapsed NaN": lambda d: d.update(elapsed=float("nan")),
    "elapsed inf": lambda d: d.update(elapsed=float("inf")),
    "elapsed -1": lambda d: d.update(elapsed=-1.0),
    "elapsed text": lambda d: d.update(elapsed="1 s"),
    "grid not a list": lambda d: d.update(grid={"N": 5}),
    "empty experiment": lambda d: d.update(experiment=""),
    "a reserved key": lambda d: d["params"].update(__float__="x"),
    "a set": lambda d: d["params"].update(s={1}),
    "a complex array": lambda d: d["params"].update(z=np.ones(2, complex)),
    "a string array": lambda d: d["params"].update(z=np.array(["a"])),
    "an object": lambda d: d["params"].update(o=object()),
    "a float key": lambda d: d["params"].update(f={1.5: 1}),
    "schema 5": lambda d: d.update(schema=5),
    "another format": lambda d: d.update(format="other"),
    "a newer version": lambda d: d.update(version="99.0"),
}


def _write(path, doc):
    doc = dict(doc)
    return write_results(path, doc.pop("experiment"), doc.pop("records"), **doc)


def _same(a, b, where="document"):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, np.generic):
        if a.dtype in (np.float64, np.int64, np.bool_):   # documented: back as Python numbers
            assert type(b) is type(a.item()), where
            _same(a.item(), b, where)
        else:
            assert type(b) is type(a) and (a == b or (np.isnan(a) and np.isnan(b))), where
    elif isinstance(a, float):
        assert type(b) is float and (a == b or (math.isnan(a) and math.isnan(b))), where
        assert math.copysign(1, a) == math.copysign(1, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b) and a == b, where


def test_what_write_results_accepts_reads_back_equal_and_the_rest_is_refused_unwritten(tmp_path):
    rng = np.random.default_rng(20260253)
    written = refused = 0
    for i in range(DOCUMENTS):
        with np.errstate(all="ignore"):   # float32 casts of large values: inf, on purpose
            doc = _document(rng)
        folder = tmp_path / str(i)
        folder.mkdir()
        path = folder / "r.json"
        broken = list(BREAK)[i % (2 * len(BREAK))] if i % (2 * len(BREAK)) < len(BREAK) else None
        if i % 3 == 0:                      # a file is already there
            path.write_text("previous")
        if broken is None:
            _write(path, doc)
            back = read_results(path)
            for key in ("experiment", "records", "params", "grid", "seeds", "elapsed", "note"):
                _same(doc[key], back[key], f"document {i}: {key}")
            written += 1
            continue
        BREAK[broken](doc)
        with pytest.raises((TypeError, ValueError)):
            _write(path, doc)
        assert sorted(p.name for p in folder.iterdir()) == (["r.json"] if i % 3 == 0 else []), \
            f"document {i} ({broken}): written before the refusal"
        if i % 3 == 0:
            assert path.read_text() == "previous"
        refused += 1
    assert written > DOCUMENTS / 3 and refused > DOCUMENTS / 3
    print(f"{written} documents written and read back equal, {refused} refused unwritten")


@pytest.mark.parametrize("broken", [b for b in BREAK if b not in (
    "a set", "a complex array", "a string array", "an object", "a float key", "a reserved key")])
def test_the_reader_refuses_what_the_writer_refuses(broken):
    # The same edits on a document as JSON holds it: read_results's checks (parse_document).
    doc = {"format": "twostep-results", "schema": 1, "version": "0.1.0", "experiment": "e",
           "params": {}, "grid": {}, "seeds": [0], "elapsed": 1.0,
           "records": [{"seed": 0, "N": 1, "batch": "fresh"}]}
    parse_document(json.dumps(doc))
    BREAK[broken](doc)
    text = json.dumps(doc).replace("NaN", '{"__float__": "nan"}').replace(
        "Infinity", '{"__float__": "inf"}')
    with pytest.raises(ResultsFileError):
        parse_document(text)
