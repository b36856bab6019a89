r"""Results files: a sweep's records with its parameters and the package version, and the one
writer of ``python -m twostep`` and ``python -m twostep at-scale``.

A results file is JSON: ``{"format": "twostep-results", "schema": 1, "version", "experiment",
"params", "grid", "seeds", "backend", "created", "elapsed", "environment", "records"}``, one
record per task of :func:`twostep.sweep` (its parameters, ``seed`` and results). Values
round-trip with their types: arrays as ``{"__ndarray__": nested list, "dtype", "shape"}``,
float32 (and other non-default) numpy scalars as ``{"__scalar__": value, "dtype"}``,
integer-keyed dicts as ``{"__items__": [[key, value], ...]}``, infinities and NaN as
``{"__float__": "inf"}`` (never JSON's non-standard ``NaN``/``Infinity`` literals, nor an
overflowing ``1e999``: refused on both sides); float64 exactly; tuples come back as lists.

One schema: :func:`read_results` checks a file (:func:`check_document`, naming the file and
the field); :func:`write_results` runs the same checks on the text it is about to write, so it
refuses, before writing a byte, what the reader would refuse. Files of twostep 0.1.0 without
a ``schema`` field (e.g. the committed ``results/at_scale/*.json``) read as schema 1.

One writer per file (:class:`ResultsWriter`): an exclusive ``fcntl.flock`` on
``<file>.lock``, from before the existence check until the writer closes (or its process
ends: the kernel releases a dead process's lock). The lock file names its holder (pid and
command); a second writer is refused at once with that name; a lock no one holds is stale and
taken over.

Crash safety: every write is a temporary file beside the target, flushed, renamed over it,
the folder flushed, so a file on disk is always one the writer finished, which ``--resume``
continues. A new file gets the mode ``open(path, "w")`` would give; a rewritten one keeps its.

Test hooks (private): ``TWOSTEP_FAULT_AT="K:before"`` (``"K:after"``) kills the process with
SIGKILL right before (after) the rename of its K-th write (tests/unit/scale/test_crash_safety.py);
``TWOSTEP_HOLD_LOCK=PATH`` makes a writer that took its lock wait until PATH exists
(tests/unit/scale/test_races.py). Unset, each costs one look-up.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import re
import secrets
import signal
import stat
import sys
import tempfile
import time
from datetime import datetime, timezone

try:
    import fcntl
except ImportError:   # not on Windows: no lock there
    fcntl = None

import numpy as np

FORMAT = "twostep-results"
#: The layout of a results file; a reader refuses files of a newer schema.
SCHEMA = 1
#: Top-level fields every results file has, with their JSON types.
REQUIRED = {"format": str, "version": str, "experiment": str, "params": dict, "grid": dict,
            "seeds": list, "records": list}
#: Optional top-level fields, checked when present.
OPTIONAL = {"schema": int, "created": str, "environment": dict, "elapsed": numbers.Real,
            "complete": bool, "command": (str, type(None)), "commands": list,
            "backend": str, "jobs": int}
_TAGS = ("__ndarray__", "__scalar__", "__float__", "__items__")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?([.+-]?[0-9A-Za-z.+-]*)$")
#: Array and scalar dtypes a file may hold: booleans, integers and floats.
_KINDS = "biuf"


def _encode(value, where="value"):
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _KINDS:
            raise TypeError(f"cannot store {where}, an array of dtype {value.dtype}, in a "
                            f"results file (bool, integer and float arrays only)")
        return {"__ndarray__": _encode(value.tolist(), where), "dtype": value.dtype.name,
                "shape": list(value.shape)}
    if isinstance(value, np.generic):
        if value.dtype.kind not in _KINDS:
            raise TypeError(f"cannot store {where}, a numpy {value.dtype} scalar, in a results file")
        item = value.item()
        # float64, int64 and bool_ come back as Python float / int / bool, which compare and
        # compute the same; other dtypes (float32 ...) keep theirs.
        if value.dtype in (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_)):
            return _encode(item, where)
        return {"__scalar__": _encode(item, where), "dtype": value.dtype.name}
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            clash = [k for k in value if k in _TAGS]
            if clash:
                raise TypeError(f"cannot store {where}: key {clash[0]!r} is reserved by the format")
            return {k: _encode(v, f"{where}.{k}") for k, v in value.items()}
        bad = [k for k in value if not isinstance(k, (str, numbers.Integral)) or isinstance(k, bool)]
        if bad:
            raise TypeError(f"cannot store {where}: dict keys must be strings or integers, "
                            f"got {bad[0]!r}")
        return {"__items__": [[int(k) if not isinstance(k, str) else k,
                               _encode(v, f"{where}[{k!r}]")] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store {where}, a {type(value).__name__}, in a results file")


class ResultsFileError(ValueError):
    """A results file that does not follow the schema; the message names the file and field."""


def _decode(value, where, path):
    def fail(message):
        raise ResultsFileError(f"{path}: {where} {message}")

    def dtype(what):
        name = value.get("dtype")
        try:
            dt = np.dtype(name) if isinstance(name, str) else None
        except TypeError:
            dt = None
        if dt is None:
            fail(f"has an unknown dtype {name!r}")
        if dt.kind not in _KINDS:
            fail(f"has dtype {name!r}; a results file holds bool, integer and float {what}")
        return dt

    if isinstance(value, dict):
        if "__ndarray__" in value:
            dt, shape = dtype("arrays"), value.get("shape")
            if (not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                                       and s >= 0 for s in shape)):
                fail(f"has shape {shape!r}; it must be a list of integers >= 0")
            data = _decode(value["__ndarray__"], where, path)
            try:
                arr = np.asarray(data, dtype=dt)
            except (TypeError, ValueError) as err:
                fail(f"holds data that is not a {dt} array ({err})")
            if arr.shape != tuple(shape) and arr.size != math.prod(shape):
                fail(f"holds {arr.size} value(s) but its shape {shape} needs {math.prod(shape)}")
            return arr.reshape(shape)
        if "__scalar__" in value:
            dt = dtype("scalars")
            item = _decode(value["__scalar__"], where, path)
            if not isinstance(item, (bool, int, float)):
                fail(f"is a {dt} scalar holding {item!r}")
            return dt.type(item)
        if "__float__" in value:
            text = value["__float__"]
            if text not in ("inf", "-inf", "nan"):
                fail(f"is a non-finite float tag holding {text!r} (inf, -inf or nan)")
            return float(text)
        if "__items__" in value:
            items = value["__items__"]
            if not isinstance(items, list) or not all(
                    isinstance(i, list) and len(i) == 2 and isinstance(i[0], (int, str))
                    for i in items):
                fail("is an integer-keyed dict whose __items__ are not [key, value] pairs")
            return {k: _decode(v, f"{where}[{k!r}]", path) for k, v in items}
        return {k: _decode(v, f"{where}.{k}", path) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, f"{where}[{i}]", path) for i, v in enumerate(value)]
    return value


def blas_threads() -> dict:
    """Threads of each BLAS/OpenMP library loaded here (threadpoolctl; ``{}`` without it), e.g.
    ``{"openblas": 2}``: their number changes the summation order, hence a result's last bits."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {}
    return {info.get("internal_api", info.get("prefix", "?")): int(info.get("num_threads", 0))
            for info in threadpool_info()}


def environment(device: str | None = None) -> dict:
    """Where a run ran: Python, numpy, scipy and (if loaded) CuPy / PyTorch versions, the machine,
    the BLAS threads (:func:`blas_threads`), and ``device`` (e.g. the GPU's name) if given."""
    import platform

    import scipy

    env = {"python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "machine": platform.machine(),
           "processor": platform.processor() or platform.machine(),
           "blas_threads": blas_threads()}
    env.update({name: getattr(sys.modules[name], "__version__", "?") for name in ("cupy", "torch")
                if name in sys.modules})
    if device:
        env["device"] = device
    return env


#: The test hook's environment variable (see the module docstring).
FAULT_ENV = "TWOSTEP_FAULT_AT"
_writes = 0   # atomic writes so far in this process (the hook's K)


def _die_at(when: str) -> None:
    text = os.environ.get(FAULT_ENV)
    if not text:
        return
    k, _, at = text.partition(":")
    if not k.isdigit() or int(k) < 1 or at not in ("before", "after"):
        # A malformed hook must not pass for a run that survived every fault.
        raise ValueError(f"{FAULT_ENV} must be K:before or K:after with an integer K >= 1, "
                         f"got {text!r}")
    if (int(k), at) == (_writes, when):
        # SIGKILL, not an exception: no finally block, buffer flush or atexit handler runs,
        # as in a crash, an out-of-memory kill or a scheduler's hard stop.
        if hasattr(signal, "SIGKILL"):
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)


def _atomic_write(path: str, text: str) -> None:
    # A unique temporary file beside the target, flushed to disk, then renamed over it: a
    # reader (or a run killed at any instant) sees the old file or the new one, never half.
    # The one place a results file is written, hence the one place of the test hook.
    global _writes
    folder = os.path.dirname(path) or "."
    # A rewritten file keeps its mode; a new one gets what open(path, "w") would give it (the
    # kernel applies the umask to the 0o666 asked for here, as it does there).
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    _writes += 1
    tmp = os.path.join(folder, f"{os.path.basename(path)}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if mode is not None:
                os.chmod(tmp, mode)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        _die_at("before")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    # The rename reaches the disk with the folder's entry: without this flush a power cut
    # could bring back the old file after the new one was reported written (POSIX only).
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    _die_at("after")


def write_results(path, experiment: str, records: list[dict], params: dict | None = None,
                  grid: dict | None = None, seeds=(), **meta) -> str:
    """Write ``records`` of ``experiment`` with their parameters and the package version.

    Parameters
    ----------
    path : str or path-like
        Destination, conventionally ``*.json`` (its folder is created if needed), replaced
        atomically; the file also records :func:`environment`.
    experiment : str
    records : list of dict
        As returned by :func:`twostep.sweep`.
    params, grid : dict, optional
        Fixed parameters and the swept grid (dict of lists).
    seeds : sequence of int
    **meta
        Further JSON-serialisable entries (e.g. ``backend``, ``elapsed``, ``device``).

    Returns
    -------
    str
        The path written.

    Raises
    ------
    TypeError, ResultsFileError
        Before anything is written: a value the format cannot hold, or a document that
        :func:`read_results` would refuse (its checks, on the text about to be written).
    """
    from .._version import __version__

    if not isinstance(experiment, str) or not experiment:
        raise ValueError(f"experiment must be a non-empty string, got {experiment!r}")
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TypeError("records must be a list of dicts (the output of twostep.sweep)")
    meta = dict(meta)
    env = environment(meta.pop("device", None))
    env.update(meta.pop("environment", None) or {})
    doc = {"format": FORMAT, "schema": SCHEMA, "version": __version__, "experiment": experiment,
           "params": params or {}, "grid": grid or {}, "seeds": list(seeds),
           "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "environment": env, **meta, "records": records}
    path = os.fspath(path)
    try:
        text = json.dumps(_encode(doc, "document"), indent=1, allow_nan=False)
        parse_document(text, path)     # what read_results would refuse is never written
    except RecursionError:
        raise TypeError(f"cannot store the records of {path}: nested too deeply") from None
    except ResultsFileError as err:
        raise ResultsFileError(f"not written, as read_results would refuse it: {err}") from None
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    _atomic_write(path, text)
    return path


def _type_name(types) -> str:
    names = {str: "a string", dict: "an object", list: "a list", int: "an integer",
             bool: "true or false", numbers.Real: "a number", type(None): "null"}
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(names.get(t, t.__name__) for t in types)


def _is(value, types) -> bool:
    types = types if isinstance(types, tuple) else (types,)
    return bool in types if isinstance(value, bool) else isinstance(value, types)


def _shown(value):
    # A value as a message shows it: a non-finite float tag as its float.
    return float(value["__float__"]) if isinstance(value, dict) and value.get("__float__") in (
        "inf", "-inf", "nan") else value


def check_document(doc, path="<document>") -> None:
    """Raise :class:`ResultsFileError` (a ``ValueError``) naming ``path`` and the field if the
    raw JSON ``doc`` is not a results file of a schema this package reads."""
    from .._version import __version__

    def fail(message):
        raise ResultsFileError(f"{path}: {message}")

    if not isinstance(doc, dict):
        fail(f"not a twostep results file (a JSON object with format {FORMAT!r}), got a JSON "
             f"{type(doc).__name__}")
    if doc.get("format") != FORMAT:
        fail(f"not a twostep results file: field 'format' must be {FORMAT!r}, got "
             f"{doc.get('format')!r}")
    for key, types in {**REQUIRED, **OPTIONAL}.items():
        if key not in doc and key in REQUIRED:
            fail(f"lacks the required field {key!r} ({_type_name(types)})")
        if key in doc and not _is(doc[key], types):
            shown = _shown(doc[key])
            fail(f"field {key!r} must be {_type_name(types)}, got {type(shown).__name__} "
                 f"{str(shown)[:60]!r}")
    schema = doc.get("schema", 1)   # files of twostep 0.1.0 have no schema field: schema 1
    if schema < 1 or schema > SCHEMA:
        fail(f"field 'schema' is {schema}; this twostep reads schema 1 to {SCHEMA}")
    if doc.get("elapsed", 0) < 0:
        fail(f"field 'elapsed' must be a number of seconds >= 0, got {doc['elapsed']!r}")
    found, here = _VERSION.match(doc["version"]), _VERSION.match(__version__)
    if not found:
        fail(f"field 'version' must be a twostep version such as {__version__!r}, got "
             f"{doc['version']!r}")
    if (int(found[1]), int(found[2])) > (int(here[1]), int(here[2])):
        fail(f"field 'version' is {doc['version']!r}, newer than this twostep ({__version__}); "
             f"upgrade twostep to read it")
    if not doc["experiment"]:
        fail("field 'experiment' must be a non-empty string")
    for key, values in doc["grid"].items():
        # A file with no record yet sweeps nothing so far: its grid lists may be empty (an
        # older tools/at_scale.py wrote such a file before its first task; it resumes).
        if not isinstance(values, list) or (not values and doc["records"]):
            fail(f"field grid.{key} must be a non-empty list"
                 f"{' (the file has records)' if values == [] else ''}, got {_shown(values)!r}")
    for i, seed in enumerate(doc["seeds"]):
        if not _is(seed, int) or seed < 0:
            fail(f"field seeds[{i}] must be an integer >= 0, got {_shown(seed)!r}")
    for i, rec in enumerate(doc["records"]):
        if not isinstance(rec, dict) or "__items__" in rec:
            fail(f"field records[{i}] must be an object with string keys (one task), got "
                 f"{type(rec).__name__}")
        if "seed" not in rec:
            fail(f"field records[{i}] lacks 'seed'")
        missing = [k for k in doc["grid"] if k not in rec]
        if missing:
            fail(f"field records[{i}] lacks the swept parameter(s) {missing}")
        for key, low in (("seed", 0), ("N", 1), ("n", 1), ("d", 1)):
            if key in rec and not (_is(rec[key], int) and rec[key] >= low):
                fail(f"field records[{i}].{key} must be an integer >= {low}, got "
                     f"{_shown(rec[key])!r}")


def _no_literal(text):
    raise ValueError(f"a bare {text} (twostep writes a non-finite value as "
                     f'{{"__float__": "nan"}}, "inf" or "-inf")')


def _finite_number(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:30]} overflows a float (it reads as {value})")
    return value


def parse_document(text: str, path="<document>") -> dict:
    """The results document in the JSON ``text``, checked (:func:`check_document`) and
    decoded: what :func:`read_results` returns for a file holding ``text``, and the check
    :func:`write_results` runs before it writes."""
    try:
        doc = json.loads(text, parse_constant=_no_literal, parse_float=_finite_number)
        check_document(doc, path)
        return {k: _decode(v, k, path) for k, v in doc.items()}
    except RecursionError:
        raise ResultsFileError(f"{path}: not a twostep results file (nested too deeply)") from None
    except ResultsFileError:
        raise
    except ValueError as err:    # JSONDecodeError, or a literal refused above
        raise ResultsFileError(f"{path}: not a twostep results file (invalid JSON: {err})") from None


def read_results(path) -> dict:
    """Read a file written by :func:`write_results` (or ``python -m twostep``), checked
    against the schema (:func:`check_document`).

    Returns
    -------
    dict
        The stored document: ``experiment``, ``version``, ``params``, ``grid``, ``seeds``,
        ``records`` (list of dicts, arrays restored as numpy arrays), and any metadata.

    Raises
    ------
    ResultsFileError
        (a ``ValueError``) naming the file and the field, when the file is not JSON, not a
        results file, of a newer schema or version, or a field has the wrong type.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as err:
        raise ResultsFileError(f"{path}: not a twostep results file (not UTF-8 text: "
                               f"{err})") from None
    return parse_document(text, path)


# --- one writer per file ------------------------------------------------------------------

#: The test hook that holds a writer once it has its lock (see the module docstring).
HOLD_ENV = "TWOSTEP_HOLD_LOCK"


class ResultsLockedError(ValueError):
    """Another process is writing the results file; the message names it (pid and command)."""


def _holder(fd: int, lock: str) -> str:
    # The holder writes its name right after taking the lock, over what a dead process left:
    # wait (a little) for the name of a live process.
    for _ in range(200):
        os.lseek(fd, 0, os.SEEK_SET)
        pid, _, command = os.read(fd, 4096).decode("utf-8", "replace").strip().partition(" ")
        if pid.isdigit():
            with contextlib.suppress(PermissionError):
                try:
                    os.kill(int(pid), 0)
                except (ProcessLookupError, OverflowError):
                    time.sleep(0.01)
                    continue
            return f"pid {pid}: {command}"
        time.sleep(0.01)
    return f"one that has not named itself in {lock}"


def lock_results(path, command: str | None = None) -> int | None:
    """Take the one-writer lock of the results file ``path`` (``<path>.lock``, module
    docstring) for this process, writing ``"<pid> <command>"`` in it; returns its descriptor,
    to hold until :func:`unlock_results`. A lock that no live process holds is taken over.

    Raises
    ------
    ResultsLockedError
        At once, naming the holder, when another process holds the lock.
    """
    if fcntl is None:
        return None
    lock = os.fspath(path) + ".lock"
    while True:
        # Held read-only (flock needs no write access): an open writable file would stop the
        # file system from being remounted read-only under the run.
        fd = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd, lock)
            os.close(fd)
            raise ResultsLockedError(f"{path} is being written by another process ({holder}); "
                                     f"wait until it ends, or give another output") from None
        try:   # the holder before us may have removed the file we opened: lock the new one
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        with open(lock, "w", encoding="utf-8") as fh:      # the name of the holder
            fh.write(f"{os.getpid()} {command or ' '.join(sys.argv)}\n")
    except OSError:
        unlock_results(path, fd)
        raise
    hold = os.environ.get(HOLD_ENV)
    while hold and not os.path.exists(hold):
        time.sleep(0.01)
    return fd


def unlock_results(path, fd: int | None) -> None:
    """Release the lock :func:`lock_results` took (its file is removed first, while held)."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.unlink(os.fspath(path) + ".lock")
        os.close(fd)


def _canonical(value):
    # Parameters as JSON sees them: tuples and lists alike, numpy scalars as numbers.
    return json.loads(json.dumps(_encode(value), sort_keys=True))


def differences(found: dict, wanted: dict, prefix: str = "") -> list[str]:
    """The fields where ``found`` (a file) and ``wanted`` (this run) differ, as phrases
    ``"params.c1 is 0.3 in the file, 0.2 here"``."""
    out = []
    for key in sorted(set(found) | set(wanted)):
        name = f"{prefix}{key}"
        if key not in found:
            out.append(f"{name} is missing in the file, {wanted[key]!r} here")
        elif key not in wanted:
            out.append(f"{name} is {found[key]!r} in the file, absent here")
        else:
            a, b = _canonical(found[key]), _canonical(wanted[key])
            if isinstance(a, dict) and isinstance(b, dict):
                out += differences(a, b, name + ".")
            elif a != b:
                out.append(f"{name} is {_short(a)} in the file, {_short(b)} here")
    return out


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


class ResultsWriteError(OSError):
    """A results file could not be written mid-run (disk full, read-only, no permission);
    the message names the file and what it holds."""


class ResultsWriter:
    """One results file, held by this writer alone and rewritten atomically after every task.

    Parameters
    ----------
    path : str or path-like
        The results file; its folder must exist and be writable (checked here, before work).
    experiment : str
    params : dict
        The fixed parameters; a resumed file must have the same.
    key : sequence of str
        The record fields that identify a task (e.g. ``("N", "batch", "seed")``).
    resume : bool
        Continue the file at ``path`` if it exists: its records are kept (the first of each
        task: :attr:`note` says how many duplicates were left out) and :meth:`done` tells
        which tasks need no recomputation. A file of another experiment, schema, package
        version, parameters, ``identity`` or ``grid_keys`` is refused, naming the fields.
    force : bool
        Overwrite an existing file instead of refusing (ignored with ``resume``).
    identity : dict, optional
        Further top-level fields that must match a resumed file (e.g. ``backend``).
    grid_keys : sequence of str, optional
        The swept parameters; a resumed file must sweep the same ones.
    command : str, optional
        This run's command: in the lock file, and last in :attr:`commands` (the file's earlier
        commands first).

    Raises
    ------
    ResultsLockedError
        At once, when another process writes ``path`` (:func:`lock_results`).
    FileExistsError
        When ``path`` exists and neither ``resume`` nor ``force`` is given.
    ValueError
        When the path is a folder or not writable, or the file to resume does not belong.

    Notes
    -----
    The lock is held from before the existence check until :meth:`close` (or the process's
    end). Taking a file over removes the temporary files a killed write left beside it.
    :attr:`saved` counts the records on disk, :attr:`elapsed` the seconds of earlier runs.
    """

    def __init__(self, path, experiment: str, params: dict, *, key, resume: bool = False,
                 force: bool = False, identity: dict | None = None, grid_keys=None,
                 command: str | None = None):
        from .._version import __version__

        self.path = check_output_path(path)
        self.experiment, self.params = experiment, dict(params)
        self.key = tuple(key)
        self.identity = dict(identity or {})
        self.records: list[dict] = []
        self.previous: dict = {}
        self.saved, self.note = 0, None
        self._lock = lock_results(self.path, command)
        try:
            if os.path.exists(self.path) and not (force and not resume):
                if not resume:
                    raise FileExistsError(f"{self.path} exists; --resume continues it, --force "
                                          f"overwrites it")
                doc = read_results(self.path)
                wanted = {"experiment": experiment, "schema": SCHEMA, "version": __version__,
                          **self.identity}
                found = {"experiment": doc["experiment"], "schema": doc.get("schema", 1),
                         "version": doc["version"], **{k: doc.get(k) for k in self.identity}}
                diff = differences(found, wanted)
                diff += differences(doc["params"], self.params, "params.")
                if grid_keys is not None and sorted(doc["grid"]) != sorted(grid_keys):
                    diff.append(f"the swept parameters are {sorted(doc['grid'])} in the file, "
                                f"{sorted(grid_keys)} here")
                if diff:
                    raise ValueError(f"cannot resume {self.path}: it is not this run's file "
                                     f"({'; '.join(diff)}); give another output, or --force "
                                     f"to overwrite it")
                bad = [i for i, r in enumerate(doc["records"]) if any(k not in r for k in self.key)]
                if bad:
                    raise ValueError(f"cannot resume {self.path}: records[{bad[0]}] lacks one "
                                     f"of the task fields {list(self.key)}")
                seen = set()
                for r in doc["records"]:      # the first record of each task
                    if self.task(r) not in seen:
                        seen.add(self.task(r))
                        self.records.append(r)
                dropped = len(doc["records"]) - len(self.records)
                if dropped:
                    self.note = (f"{self.path} held {dropped} duplicate record(s) of tasks it "
                                 f"holds; the first record of each task is kept")
                self.saved, self.previous = len(self.records), doc
            _remove_temporaries(self.path)
        except BaseException:
            self.close()
            raise
        old = self.previous
        self.elapsed = float(old.get("elapsed", 0.0))
        self.commands = [*old.get("commands", [old["command"]] if old.get("command") else []),
                         command]

    def close(self) -> None:
        """Release the file's lock (idempotent)."""
        unlock_results(self.path, self._lock)
        self._lock = None

    def task(self, record: dict) -> tuple:
        """The task a record belongs to: its ``key`` fields, as a hashable tuple."""
        return tuple(json.dumps(_canonical(record[k]), sort_keys=True) for k in self.key)

    def done(self) -> set:
        """The tasks already in the file (see :meth:`task`)."""
        return {self.task(r) for r in self.records}

    def add(self, record: dict) -> None:
        """Append one finished task's record (replacing a stored record of the same task)."""
        t = self.task(record)
        self.records = [r for r in self.records if self.task(r) != t] + [record]

    def save(self, *, grid: dict, seeds, order=None, **meta) -> str:
        """Write every record (sorted by ``order``, a key function, if given) atomically.

        Raises :class:`ResultsWriteError` naming the file and the records it still holds when
        the system refuses the write (a full disk, a read-only or forbidden folder)."""
        if order is not None:
            self.records.sort(key=order)
        try:
            write_results(self.path, self.experiment, self.records, params=self.params,
                          grid=grid, seeds=seeds, **meta)
        except OSError as err:
            held = (f"it holds the {self.saved} record(s) saved before" if self.saved
                    else "no record of this run is saved in it")
            raise ResultsWriteError(f"cannot write {self.path} ({err.strerror or err}); "
                                    f"{held}") from None
        self.saved = len(self.records)
        return self.path


def _remove_temporaries(path: str) -> None:
    # A run killed between writing a temporary file and renaming it leaves the temporary
    # (_atomic_write's: the file's name, 8 characters, .tmp); it holds nothing the file lacks
    # but the record of the task that was being saved.
    folder = os.path.dirname(os.path.abspath(path))
    pattern = re.compile(re.escape(os.path.basename(path)) + r"\.[a-z0-9_]{8}\.tmp")
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if pattern.fullmatch(name):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


def check_output_path(path) -> str:
    """``path`` (str or path-like) as a string; a ``ValueError`` unless it can be written as a
    results file: not a folder, in an existing folder that can hold a new file (one byte is
    written there and removed), and writable if it exists. Checked before any work."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    path = os.fspath(path)
    if not path:
        raise ValueError("path must be a non-empty file name")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"output {path} is a folder; give a file name such as "
                         f"{os.path.join(path, 'results.json')}")
    if not os.path.isdir(folder):
        raise ValueError(f"output folder {folder} does not exist; create it first")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ValueError(f"output {path} exists and is not writable")
    # Only a byte written there proves the folder holds a file (os.access says yes to root
    # everywhere, also in /proc or on a read-only mount; a full disk still creates an empty
    # file). The probe is named like a temporary file: one a kill leaves is removed as one.
    probe = None
    try:
        fd, probe = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                                     dir=folder)
        with os.fdopen(fd, "wb") as fh:
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        raise ValueError(f"output folder {folder} cannot hold a new file "
                         f"({err.strerror or err}); give a path in a writable folder") from None
    finally:
        if probe:
            with contextlib.suppress(FileNotFoundError):   # removed meanwhile as a temporary
                os.unlink(probe)
    return path
