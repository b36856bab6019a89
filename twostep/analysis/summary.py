"""One summary type for every sweep: records grouped by their parameters, averaged over seeds."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .sweep import summarise

def _pick(value, index):
    out = np.asarray(value)[index]
    return float(out) if np.ndim(out) == 0 else out

class Summary:
    r"""``records`` grouped by the parameters ``by`` (the last one the axis), with the mean and standard
    error :math:`\mathrm{sd}(x)/\sqrt m` over each group's :math:`m` runs of each of ``values``; a point
    is named by keywords: ``s.at("overlap", batch="reused", N=4000)``."""

    def __init__(self, records: Iterable[dict], by: Iterable[str], values: Iterable[str]):
        self.records = list(records)
        self.by = tuple(by)
        self.values = tuple(values)
        self.groups = {tuple(e[k] for k in self.by): e
                       for e in summarise(self.records, self.by, self.values)}

    def _matches(self, params: dict, where: dict) -> bool:
        return all(params[k] == v for k, v in where.items())

    def _known(self, where: dict, axis_free: bool) -> None:
        unknown = sorted(set(where) - set(self.by))
        if unknown:
            raise KeyError(f"{unknown} name no parameter of this summary; it is grouped by {self.by}")
        needed = self.by[:-1] if axis_free else self.by
        missing = [k for k in needed if k not in where]
        if missing:
            raise KeyError(f"name the point: {missing} missing (grouped by {self.by})")

    def entry(self, **where) -> dict:
        """The group at one point: its parameters, each value's mean and ``<value>_sem``, and ``count``."""
        self._known(where, axis_free=False)
        key = tuple(where[k] for k in self.by)
        if key not in self.groups:
            raise KeyError(f"no runs at {where}")
        return self.groups[key]

    def at(self, value: str, index=(), sem: bool = False, **where):
        """Mean (``sem=True``: its standard error) of ``value[index]`` at one point."""
        return _pick(self.entry(**where)[value + ("_sem" if sem else "")], index)

    def count(self, **where) -> int:
        """The number of runs at one point."""
        return int(self.entry(**where)["count"])

    def axis(self, **where) -> list:
        """The values of the last parameter at the points matching ``where``, ascending."""
        return sorted({key[-1] for key, e in self.groups.items() if self._matches(e, where)})

    def series(self, value: str, index=(), **where) -> tuple:
        """``(x, mean, sem)`` along the last parameter, the others fixed: arrays of ``(len(x), ...)``."""
        self._known(where, axis_free=True)
        x = self.axis(**where)
        rows = [self.entry(**where, **{self.by[-1]: t}) for t in x]
        mean = np.array([np.asarray(r[value])[index] for r in rows])
        sem = np.array([np.asarray(r[value + "_sem"])[index] for r in rows])
        return np.array(x), mean, sem

    def runs(self, **where) -> list:
        """The records matching ``where``, in run order."""
        unknown = sorted(set(where) - set(self.by))
        if unknown:
            raise KeyError(f"{unknown} name no parameter of this summary; it is grouped by {self.by}")
        return [r for r in self.records if self._matches(r, where)]

    def seed_values(self, value: str, index=(), **where) -> np.ndarray:
        """``value[index]`` of every run at one point, ``(count, ...)``."""
        self._known(where, axis_free=False)
        return np.array([np.asarray(r[value])[index] for r in self.runs(**where)])

    def pooled(self, value: str, index=(), **where) -> tuple:
        """``(x, y)``: the last parameter and ``value[index]`` of every run matching ``where``."""
        self._known(where, axis_free=True)
        rows = self.runs(**where)
        return (np.array([r[self.by[-1]] for r in rows], dtype=float),
                np.array([np.asarray(r[value])[index] for r in rows]))
