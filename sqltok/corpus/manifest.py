"""The record of a `prepare` run (`manifest.json`): settings, sqltok's version, documents and bytes in
and out of every step, shares by language before and after, PII found by kind, the balance asked for
and reached, the output's sources and licenses, and the outputs."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import sqltok


def _plain(value: Any) -> Any:
    """Settings as JSON values (dataclasses as dicts)."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass
class Manifest:
    settings: dict
    inputs: list[str]
    version: str = field(default_factory=lambda: sqltok.__version__)
    steps: list[dict] = field(default_factory=list)
    languages_before: list[dict] | None = None
    languages_after: list[dict] | None = None
    pii: dict[str, int] | None = None
    balance: dict | None = None
    sources: list[dict] | None = None  # documents and bytes per source (and license) of the output
    outputs: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def start(cls, settings: Any, inputs: list[str]) -> "Manifest":
        return cls(_plain(settings), inputs)

    def add_step(self, name: str, before: tuple[int, int] | None, after: tuple[int, int], **facts) -> None:
        row = {"step": name}
        if before is not None:
            row |= {"documents_in": before[0], "bytes_in": before[1]}
        row |= {"documents_out": after[0], "bytes_out": after[1], **_plain(facts)}
        self.steps.append(row)

    def add_output(self, name: str, documents: int, nbytes: int) -> None:
        self.outputs[name] = {"file": f"{name}.parquet", "documents": documents, "bytes": nbytes}

    def duplicates_removed(self) -> dict[str, int]:
        return {s["step"].removeprefix("dedup_"): s["documents_in"] - s["documents_out"]
                for s in self.steps if s["step"].startswith("dedup_")}

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["sqltok_version"] = d.pop("version")
        d["duplicates_removed"] = self.duplicates_removed()
        return d

    def write(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.as_dict(), f, indent=2, ensure_ascii=False)
            f.write("\n")
