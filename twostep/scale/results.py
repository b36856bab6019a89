"""Results files (JSON, ``"format": "twostep-results"``): a sweep's records with its parameters
and the package version, tagged objects for arrays and non-JSON values; one writer per file
(``<file>.lock``), every write atomic. Test hooks: ``TWOSTEP_FAULT_AT="K:before"`` (or
``"K:after"``) SIGKILLs at the K-th write's rename; ``TWOSTEP_HOLD_LOCK=PATH`` holds a
writer's lock until PATH exists.
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

from .._version import __version__

FORMAT = "twostep-results"
SCHEMA = 1
#: Top-level fields with their JSON types: required, and checked when present.
REQUIRED = {"format": str, "version": str, "experiment": str, "params": dict, "grid": dict,
            "seeds": list, "records": list}
OPTIONAL = {"schema": int, "created": str, "environment": dict, "elapsed": numbers.Real,
            "complete": bool, "command": (str, type(None)), "commands": list,
            "backend": str, "jobs": int}
_TAGS = ("__ndarray__", "__scalar__", "__float__", "__items__")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?([.+-]?[0-9A-Za-z.+-]*)$")
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
        # float64, int64 and bool_ come back as float / int / bool; others keep their dtype
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
    """A results file that does not follow the schema (the message names the file and field)."""

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
    """Threads of each BLAS/OpenMP library loaded (``{"openblas": 2}``): they set the last bits."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {}
    return {info.get("internal_api", info.get("prefix", "?")): int(info.get("num_threads", 0))
            for info in threadpool_info()}

def environment(device: str | None = None) -> dict:
    """Where a run ran: library versions, the machine, the BLAS threads and ``device``."""
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

FAULT_ENV = "TWOSTEP_FAULT_AT"
_writes = 0   # atomic writes so far in this process (the hook's K)

def _die_at(when: str) -> None:
    text = os.environ.get(FAULT_ENV)
    if not text:
        return
    k, _, at = text.partition(":")
    if not k.isdigit() or int(k) < 1 or at not in ("before", "after"):
        raise ValueError(f"{FAULT_ENV} must be K:before or K:after with an integer K >= 1, "
                         f"got {text!r}")
    if (int(k), at) == (_writes, when):
        # SIGKILL: no finally, flush or atexit runs, as in a crash or an out-of-memory kill
        if hasattr(signal, "SIGKILL"):
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)

def _atomic_write(path: str, text: str) -> None:
    # A reader, or a run killed at any instant, sees the old file or the new one, never half.
    global _writes
    folder = os.path.dirname(path) or "."
    # A rewritten file keeps its mode; a new one gets open(path, "w")'s (0o666 less the umask).
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
    # Flush the folder's entry too, or a power cut could bring back the old file.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    _die_at("after")

def write_results(path, experiment: str, records: list[dict], params: dict | None = None,
                  grid: dict | None = None, seeds=(), **meta) -> str:
    """Write ``records`` (of :func:`twostep.sweep`) of ``experiment`` to ``path`` atomically,
    with the fixed ``params``, the swept ``grid``, ``seeds``, the :func:`environment` and
    ``meta``; returns the path. A value the format cannot hold, or a document
    :func:`read_results` would refuse, raises before anything is written."""
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
        parse_document(text, path)
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
    """Raise :class:`ResultsFileError` naming ``path`` and the field unless the raw JSON ``doc``
    is a results file of a schema this package reads."""
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
        # A file with no record yet may sweep nothing so far (an older at_scale wrote such)
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
    """The results document in the JSON ``text``, checked (:func:`check_document`) and decoded."""
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
    """The document of a file of :func:`write_results`, checked (:func:`check_document`):
    ``experiment``, ``version``, ``params``, ``grid``, ``seeds``, ``records`` (arrays as numpy
    arrays) and any metadata; else a :class:`ResultsFileError` naming the file and field."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as err:
        raise ResultsFileError(f"{path}: not a twostep results file (not UTF-8 text: "
                               f"{err})") from None
    return parse_document(text, path)

HOLD_ENV = "TWOSTEP_HOLD_LOCK"

class ResultsLockedError(ValueError):
    """Another process is writing the results file; the message names it (pid and command)."""

def _holder(fd: int, lock: str) -> str:
    # The holder names itself right after taking the lock: wait a little for a live one.
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
    """Take ``<path>.lock`` for this process (writing ``"<pid> <command>"`` in it) and return
    its descriptor; a stale lock is taken over, a held one raises :class:`ResultsLockedError`."""
    if fcntl is None:
        return None
    lock = os.fspath(path) + ".lock"
    while True:
        # Read-only: an open writable file would stop a read-only remount under the run.
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
    """Release :func:`lock_results`' lock (its file removed first, while held)."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.unlink(os.fspath(path) + ".lock")
        os.close(fd)

def _canonical(value):
    # Parameters as JSON sees them: tuples and lists alike, numpy scalars as numbers.
    return json.loads(json.dumps(_encode(value), sort_keys=True))

def differences(found: dict, wanted: dict, prefix: str = "") -> list[str]:
    """Phrases such as ``"params.c1 is 0.3 in the file, 0.2 here"``: where ``found`` and
    ``wanted`` differ."""
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
    """A results file could not be written mid-run; the message names it and what it holds."""

class ResultsWriter:
    """One results file, locked (:func:`lock_results`) until :meth:`close` and rewritten
    atomically after every task; ``key``: the record fields that identify a task.

    An existing file is refused unless ``force`` (overwrite) or ``resume``: continue it, keeping
    the first record of each task (:attr:`note` counts the duplicates), if its experiment,
    schema, version, ``params``, ``identity`` fields and ``grid_keys`` match (else a
    ``ValueError`` naming them). :attr:`saved` counts the records on disk, :attr:`elapsed` the
    seconds of earlier runs, :attr:`commands` their commands then ``command``.
    """

    def __init__(self, path, experiment: str, params: dict, *, key, resume: bool = False,
                 force: bool = False, identity: dict | None = None, grid_keys=None,
                 command: str | None = None):
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
        """Write every record (sorted by the key function ``order``) atomically; a refused write
        raises :class:`ResultsWriteError`."""
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
    # A run killed before a rename leaves _atomic_write's temporary: nothing the file lacks
    # but the task being saved.
    folder = os.path.dirname(os.path.abspath(path))
    pattern = re.compile(re.escape(os.path.basename(path)) + r"\.[a-z0-9_]{8}\.tmp")
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if pattern.fullmatch(name):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))

def check_output_path(path) -> str:
    """``path`` as a string, if it can be written as a results file (not a folder, in an
    existing folder that holds a new byte, writable if it exists), else a ``ValueError``."""
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
    # Only a written byte proves it (os.access says yes to root everywhere); the probe is
    # named like a temporary file, so one a kill leaves is removed as one.
    probe = None
    try:
        fd, probe = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
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
