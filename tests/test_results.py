"""Results files: arrays, floats and metadata round-trip exactly."""

import json

import numpy as np
import pytest

import twostep as ts
from twostep.scale.results import read_results, write_results


def test_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(0)
    records = [{"N": 10, "seed": 0, "x": float(rng.standard_normal()),
                "v": rng.standard_normal((2, 3)), "k": np.arange(3), "f32": np.float32(0.1),
                "inf": float("inf"), "nan": np.nan, "name": "he1"}]
    path = write_results(tmp_path / "sub" / "r.json", "two_steps", records,
                         params={"c1": 0.2}, grid={"N": [10]}, seeds=[0], elapsed=1.5)
    doc = read_results(path)
    assert doc["version"] == ts.__version__ and doc["experiment"] == "two_steps"
    assert doc["params"] == {"c1": 0.2} and doc["grid"] == {"N": [10]} and doc["seeds"] == [0]
    r = doc["records"][0]
    assert r["x"] == records[0]["x"]
    np.testing.assert_array_equal(r["v"], records[0]["v"])
    assert r["v"].dtype == np.float64 and r["k"].dtype == records[0]["k"].dtype
    assert r["inf"] == float("inf") and np.isnan(r["nan"]) and r["name"] == "he1"


def test_bad_input_and_foreign_files(tmp_path):
    with pytest.raises(ValueError, match="experiment"):
        write_results(tmp_path / "r.json", "", [])
    with pytest.raises(TypeError, match="records"):
        write_results(tmp_path / "r.json", "x", {"a": 1})
    with pytest.raises(TypeError, match="cannot store"):
        write_results(tmp_path / "r.json", "x", [{"a": object()}])
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a twostep results file"):
        read_results(other)
    other.write_text("{not json")
    with pytest.raises(ValueError, match="not a twostep results file"):
        read_results(other)
