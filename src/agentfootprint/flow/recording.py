"""Recording dials: how much a run's commit log keeps about reads, written values and each write's inputs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

ReadTracking = Literal["summary", "full"]
CommitValues = Literal["delta", "full"]
WriteProvenance = Literal["off", "reads-prefix"]


class RecordingDials(BaseModel):
    """``read_tracking``: ``summary`` records which commit each read saw, ``full`` also the value it saw;
    ``commit_values``: ``delta`` records appends and merges as their tails, ``full`` as the whole new value;
    ``write_provenance``: ``reads-prefix`` names, on each write, the keys the stage had read before it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    read_tracking: ReadTracking = "summary"
    commit_values: CommitValues = "delta"
    write_provenance: WriteProvenance = "off"


DEFAULT_DIALS = RecordingDials()

__all__ = ["DEFAULT_DIALS", "CommitValues", "ReadTracking", "RecordingDials", "WriteProvenance"]
