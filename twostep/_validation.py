"""Argument checks shared by the public functions: each validates its input here once, where
it enters, with a message naming the argument and the accepted range; the cores it calls
(``twostep/model/_core.py``, ``twostep/analysis/_core.py``) trust it."""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

def check_int(value, name: str, minimum: int = 1) -> int:
    """``value`` as ``int`` if it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)

def check_real(value, name: str, *, low=None, high=None, low_open=False,
               high_open=False) -> float:
    """``value`` as ``float`` if it is a finite real in the given range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    accepted = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite and in {accepted}, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be in {accepted}, got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name} must be in {accepted}, got {value}")
    return value

def check_alpha(value, name: str = "alpha") -> float:
    """A step-size exponent: a real in ``[0, 1/2)``."""
    return check_real(value, name, low=0.0, high=0.5, high_open=True)

def check_array(value, name: str, ndim: int | None = None, shape=None,
                dtype=None) -> np.ndarray:
    """``value`` as a finite float ndarray of rank ``ndim`` and ``shape`` (``None``: free)."""
    if not isinstance(value, (np.ndarray, list, tuple, numbers.Real)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a numpy array, got {type(value).__name__}")
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(
                s is not None and s != t for s, t in zip(shape, arr.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not _all_finite(arr):
        raise ValueError(f"{name} must contain only finite values")
    return arr

_FINITE_BLOCK = 1 << 20

def _all_finite(arr: np.ndarray) -> bool:
    # By blocks of rows: never a boolean array of the whole's size (256 MB at N = 16000).
    if arr.ndim == 0:
        return bool(np.isfinite(arr))
    rows = max(1, _FINITE_BLOCK // max(1, arr[:1].size))
    return all(np.isfinite(arr[i:i + rows]).all() for i in range(0, arr.shape[0], rows))

def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """Seeds go through an explicit ``numpy.random.Generator``, never global state."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
            f"got {type(rng).__name__}")
    return rng

def check_pairs(values, name: str, pair: str) -> list[tuple]:
    """The items of ``values`` as 2-tuples (``pair``, e.g. ``"a (c, alpha) pair"``, in errors)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence, {pair} each, got {values!r}")
    out = []
    for i, item in enumerate(values):
        try:
            first, second = item
        except (TypeError, ValueError):
            raise TypeError(f"{name}[{i}] must be {pair}, got {item!r}") from None
        out.append((first, second))
    return out

def check_choice(value, name: str, choices) -> str:
    """A string among ``choices``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value

def check_type(value, name: str, types, what: str):
    """``value`` if it is an instance of ``types``, else ``TypeError``: ``name must be what``."""
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value

def check_bool(value, name: str) -> bool:
    """``value`` if it is a ``bool``."""
    return check_type(value, name, bool, "a bool")

def check_alpha_pairs(values, name: str) -> list[tuple[float, float]]:
    """Pairs ``(alpha1, alpha2)`` of step-size exponents, each in ``[0, 1/2)``."""
    return [(check_alpha(a1, f"{name}[{i}][0]"), check_alpha(a2, f"{name}[{i}][1]"))
            for i, (a1, a2) in enumerate(check_pairs(values, name, "an (alpha1, alpha2) pair"))]

def check_dtype(dtype, name: str = "dtype") -> np.dtype:
    """A floating dtype of the simulations: float64 or float32."""
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be float64 or float32, got {dtype!r}") from None
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"{name} must be float64 or float32, got {dt}")
    return dt

def check_dtype_name(dtype) -> np.dtype:
    """:func:`check_dtype` of a name or dtype, whose message lists the names."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise ValueError(f"dtype must be one of ['float32', 'float64'], got {dtype!r}") from None
    return np.dtype(check_choice(name, "dtype", ("float32", "float64")))

def check_steps(steps) -> tuple:
    """Two step sizes ``((c1, alpha1), (c2, alpha2))``: ``c_t > 0``, ``alpha_t`` in ``[0, 1/2)``."""
    try:
        (c1, a1), (c2, a2) = steps
    except (TypeError, ValueError):
        raise TypeError("steps must be ((c1, alpha1), (c2, alpha2))") from None
    c1 = check_real(c1, "c1", low=0.0, low_open=True)
    c2 = check_real(c2, "c2", low=0.0, low_open=True)
    return (c1, check_alpha(a1, "alpha1")), (c2, check_alpha(a2, "alpha2"))

def step_growth_limit(dtype) -> float:
    """The largest growth :func:`check_step_growth` accepts: the eighth root of ``dtype``'s largest
    number."""
    return float(np.finfo(check_dtype(dtype)).max) ** 0.125

def check_step_growth(c1: float, c2: float, degree, dtype, power: int = 1,
                      names=("c1", "c2")) -> float:
    r"""The growth :math:`G^{\text{power}}`, :math:`G = \max(1, c_2)\max(1, c_1)^D` (:math:`D`:
    ``degree - 1`` for a polynomial, else 1), of the two steps, or a ``ValueError`` beyond
    :func:`step_growth_limit`: a sufficient bound for every experiment to stay finite in
    ``dtype`` (``power``: the degree for features :math:`\sigma(XW^\top)`)."""
    dt = check_dtype(dtype)
    D = max(degree - 1, 1) if degree else 1
    # In logarithms: c = 1e300 overflows the power itself
    log_growth = power * (math.log10(max(1.0, c2)) + D * math.log10(max(1.0, c1)))
    limit = step_growth_limit(dt)
    if log_growth > math.log10(limit):
        other = "float32" if dt == np.float64 else "float64"
        shown = f"{10 ** log_growth:.3g}" if log_growth < 300 else f"1e+{log_growth:.0f}"
        given = (f"{names[0]} = {c1:g} is" if names[0] == names[1] else
                 f"{names[0]} = {c1:g} and {names[1]} = {c2:g} are")
        raise ValueError(
            f"{given} too large for {dt.name}: the two "
            f"steps grow like {'(' if power > 1 else ''}max(1, {names[1]}) max(1, {names[0]})^{D}"
            f"{f')^{power}' if power > 1 else ''} = {shown}, beyond {limit:.3g}, the bound "
            f"below which they stay finite in {dt.name} ({other}: {step_growth_limit(other):.3g})"
            f"; give smaller step sizes" + (" or dtype=float64" if dt == np.float32 else ""))
    return 10 ** log_growth

def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``, else free pages)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0

def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None

def _cgroup_room(proc: str, root: str) -> int | None:
    # The least room (limit - usage + page cache) over the memory cgroup and its ancestors.
    rooms = []
    for line in (_read(f"{proc}/self/cgroup") or "").splitlines():
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers == "":            # v2
            base, files = root, ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            base, files = os.path.join(root, "memory"), ("memory.limit_in_bytes",
                                                           "memory.usage_in_bytes")
        else:
            continue
        parts = [p for p in path.split("/") if p]
        for depth in range(len(parts), -1, -1):   # the cgroup, then each ancestor
            folder = os.path.join(base, *parts[:depth])
            limit, usage = (_read(os.path.join(folder, f)) for f in files)
            try:
                limit, usage = int(limit), int(usage)
            except (TypeError, ValueError):   # absent, or "max"
                continue
            if limit >= 1 << 62:              # v1's "no limit"
                continue
            stat = dict(l.split() for l in (_read(os.path.join(folder, "memory.stat")) or "")
                        .splitlines() if len(l.split()) == 2)
            rooms.append(limit - usage + int(stat.get("inactive_file", 0)))
    return max(min(rooms), 0) if rooms else None

def hard_memory_limits(proc: str = "/proc", cgroup: str = "/sys/fs/cgroup") -> list:
    """``(bytes, what)`` pairs no budget can exceed: the room under ``ulimit -v`` and under the
    memory cgroup's limit, where set."""
    out = []
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        soft = -1
    if soft >= 0 and soft != getattr(resource, "RLIM_INFINITY", -1):
        status = _read(f"{proc}/self/status") or ""
        used = next((int(l.split()[1]) * 1024 for l in status.splitlines()
                     if l.startswith("VmSize:")), 0)
        out.append((max(soft - used, 0), "the address space left under RLIMIT_AS (ulimit -v)"))
    room = _cgroup_room(proc, cgroup)
    if room is not None:
        out.append((room, "the room left under the memory cgroup's limit"))
    return out

def memory_limit() -> tuple[int, str]:
    """``(bytes, what)``: the most memory a computation may plan for now."""
    return min([(available_memory(), "the memory available now")] + hard_memory_limits())

def format_bytes(n: float) -> str:
    """``n`` bytes as a human-readable string (binary units)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024

#: Caps the memory the API may plan for (e.g. ``16G``).
LIMIT_ENV = "TWOSTEP_MAX_MEMORY"

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

def parse_size(text, name: str) -> float:
    """``"16G"`` -> ``17179869184.0`` (binary suffixes K, M, G, T; ``"800MiB"``, ``"800MB"``:
    ``"800M"``); ``name`` is named in the errors."""
    t = str(text).strip().lower().rstrip("ib").rstrip("b") if text else ""
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        value = float(t[:-1] if unit else t) * _UNITS[unit]
    except ValueError:
        raise ValueError(f"{name} must be a size such as 800M or 16G, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a positive finite size such as 800M or 16G, got {text!r}")
    return value

def check_fits(nbytes: float, what: str, budget=None, advice: str = "") -> int:
    """``MemoryError`` before allocating if ``what`` needs ``nbytes`` beyond ``budget``, a
    ``(bytes, what)`` pair (default: ``$TWOSTEP_MAX_MEMORY`` within the hard limits, else
    :func:`memory_limit`; 0: no check)."""
    if budget is None:
        text = os.environ.get(LIMIT_ENV)
        budget = (min([(int(parse_size(text, f"${LIMIT_ENV}")), f"${LIMIT_ENV}")]
                      + hard_memory_limits()) if text else memory_limit())
        advice = (f"reduce N, n or d, use dtype=float32, or set ${LIMIT_ENV} if the estimate "
                  f"is too cautious")
    limit, source = budget
    if limit and nbytes > limit:
        raise MemoryError(f"{what} needs about {format_bytes(nbytes)}, but {source} is "
                          f"{format_bytes(limit)}; {advice}")
    return int(nbytes)
