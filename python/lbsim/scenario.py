"""Scenarios: a TOML file (or a dict) merged over its preset, plus overrides."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from . import _core
from ._toml import dumps, value_text
from .errors import LbsimError, ScenarioError

__all__ = ["Scenario", "ScenarioLike", "as_scenario"]


class Scenario:
    """A simulation scenario: TOML text, the folder relative paths in it resolve
    against, and dotted-key overrides applied on top.

    The text is merged over a preset (``preset = "reps_paper"`` by default, or
    ``"reps_artifact"``), so an empty scenario is valid. Nothing is checked
    until :meth:`validate`, :meth:`resolved` or a run; problems raise
    :class:`lbsim.ScenarioError` naming the key.

    >>> s = Scenario.from_dict({"topology": {"hosts": 16}})
    >>> s.set("lb.kind", "ops").set("workload.size", "1MiB")["lb.kind"]
    'ops'
    """

    def __init__(
        self,
        text: str = "",
        *,
        base_dir: str | Path | None = None,
        source: str | None = None,
    ) -> None:
        self.text = text
        self.base_dir: Path | None = Path(base_dir) if base_dir is not None else None
        #: Where the text came from (a file name), for error messages.
        self.source = source
        self.overrides: list[tuple[str, str]] = []

    # ---- construction ---------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read a scenario file. Relative paths inside it (``workload.file``)
        resolve against the file's folder. Raises ``ScenarioError`` if the file
        is not a valid scenario, ``LbsimError`` if it cannot be read."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise LbsimError(f"cannot read scenario file {p}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise LbsimError(f"{p}: not a scenario file: a scenario is TOML text (UTF-8)") from None
        s = cls(text, base_dir=p.resolve().parent, source=str(p))
        s.resolved()
        return s

    @classmethod
    def from_toml(cls, text: str, *, base_dir: str | Path | None = None) -> Scenario:
        """A scenario from TOML text (relative paths resolve against ``base_dir``,
        by default the working directory)."""
        s = cls(text, base_dir=base_dir)
        s.resolved()
        return s

    @classmethod
    def from_dict(cls, table: Mapping[str, Any], *, base_dir: str | Path | None = None) -> Scenario:
        """A scenario from a nested dict with the layout of a scenario file,
        e.g. ``{"lb": {"kind": "reps"}, "workload": {"kind": "permutation", "size": "1MiB"}}``."""
        return cls.from_toml(dumps(table), base_dir=base_dir)

    def copy(self) -> Scenario:
        """An independent copy (overrides included)."""
        return self._clone()

    def _clone(self) -> Scenario:
        s = Scenario(self.text, base_dir=self.base_dir, source=self.source)
        s.overrides = list(self.overrides)
        return s

    # ---- overrides ------------------------------------------------------

    def set(self, key: str, value: Any) -> Scenario:
        """Override a dotted key (``"lb.kind"``, ``"workload.size"``,
        ``"seed"``) in place and return the scenario, so calls chain.

        Strings are read like ``lbsim run --set key=value``: ``"3"`` is the
        integer 3, ``"reps"`` and ``"8MiB"`` are strings. Checked when the
        scenario is resolved.
        """
        if not isinstance(key, str) or not key:
            raise TypeError("key must be a non-empty dotted key such as 'lb.kind'")
        self.overrides.append((key, value_text(value)))
        return self

    def with_overrides(self, overrides: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Scenario:
        """A copy with more overrides applied."""
        s = self._clone()
        items = overrides.items() if isinstance(overrides, Mapping) else overrides
        for k, v in items:
            s.set(k, v)
        return s

    # ---- resolution -----------------------------------------------------

    def _err(self, e: ScenarioError) -> ScenarioError:
        return e.with_source(self.source) if self.source and not e.source else e

    def resolved(self) -> str:
        """The fully resolved scenario as TOML text: preset, file and overrides
        merged, every value explicit. This is what a run records."""
        try:
            return _core.resolve(self.text, self.overrides)
        except ScenarioError as e:
            raise self._err(e) from None

    def validate(self, max_memory: int | str | None = None) -> dict[str, Any]:
        """Resolve and build the simulation without running it (this also checks
        topology sizes, link names and workload files). A scenario estimated to
        need more memory than ``max_memory`` (default 8 GiB) is refused before
        its workload is generated. Returns derived facts: hosts, flows,
        link_rate_bps, base_rtt_us, bdp_bytes, rto_us, queue_bytes, stop_at_us,
        memory_bytes (the estimate)."""
        from .runner import memory_bytes

        try:
            _, facts = _core.validate(self.text, self.overrides, self.base_dir, memory_bytes(max_memory))
        except ScenarioError as e:
            raise self._err(e) from None
        return facts

    def to_dict(self) -> dict[str, Any]:
        """The resolved scenario as a nested dict."""
        return tomllib.loads(self.resolved())

    def __getitem__(self, key: str) -> Any:
        """A resolved value by dotted key: ``scenario["topology.hosts"]``."""
        node: Any = self.to_dict()
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise KeyError(key)
            node = node[part]
        return node

    @property
    def name(self) -> str | None:
        """The scenario's ``name`` key, if it has one."""
        value = self.to_dict().get("name")
        return value if isinstance(value, str) else None

    def input_files(self) -> dict[str, Path]:
        """Files the scenario reads, by the path text written in it
        (``workload.file`` for ``kind = "flows"`` or ``"connection_matrix"``, ``workload.cdf`` when it
        names a file rather than a built-in distribution), resolved to where they are."""
        return {text: path for _, text, path in self.input_file_keys()}

    def input_file_keys(self) -> list[tuple[str, str, Path]]:
        """``(key, path text, resolved path)`` of every file the scenario reads."""
        return self._input_file_keys(self.resolved())

    def _input_file_keys(self, resolved: str) -> list[tuple[str, str, Path]]:
        if "file" not in resolved and "cdf" not in resolved:
            return []  # neither key can be there: no need to parse
        workload = tomllib.loads(resolved).get("workload", {})
        if not isinstance(workload, dict):
            return []
        out = []
        for key in ("file", "cdf"):
            f = workload.get(key)
            if not isinstance(f, str) or (key == "cdf" and f in _core.builtin_cdfs()):
                continue
            p = Path(f)
            if not p.is_absolute():
                p = (self.base_dir or Path.cwd()) / p
            out.append((f"workload.{key}", f, p))
        return out

    def key(self) -> str:
        """The run key: a hash of the resolved scenario, the content of the
        files it reads and the lbsim version. Equal keys mean equal results."""
        return self._keyed()[0]

    def _keyed(self) -> tuple[str, str, list[tuple[str, str, Path]]]:
        """The run key, the resolved text and the input files it was computed
        from, from one resolution (a sweep needs all three per point)."""
        resolved = self.resolved()
        inputs = self._input_file_keys(resolved)
        h = hashlib.sha256()
        h.update(f"lbsim {_core.__version__}\n".encode())
        h.update(resolved.encode())
        for key, text, path in sorted(inputs):
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            # workload.file keeps the form it always had, so its sweeps' keys do not move.
            tag = f"file {text} " if key == "workload.file" else f"{key} {text} "
            h.update(f"\n{tag}".encode() + hashlib.sha256(data).digest())
        return h.hexdigest()[:16], resolved, inputs

    def __repr__(self) -> str:
        src = f" source={self.source!r}" if self.source else ""
        return f"<Scenario{src} overrides={dict(self.overrides)!r}>"


ScenarioLike = Scenario | str | Path | Mapping[str, Any]


def as_scenario(s: ScenarioLike) -> Scenario:
    """A Scenario from a Scenario (returned as is), a file path or a dict."""
    if isinstance(s, Scenario):
        return s
    if isinstance(s, (str, Path)):
        return Scenario.load(s)
    if isinstance(s, Mapping):
        return Scenario.from_dict(s)
    raise TypeError(f"expected a Scenario, a path or a dict, got {type(s).__name__}")
