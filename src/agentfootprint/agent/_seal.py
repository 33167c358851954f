"""Old private path of the checkpoint seal; it lives in :mod:`agentfootprint.flow.seal` now."""

from agentfootprint.flow.seal import SEAL, CheckpointSealError, SealKey, check_seal, seal, seal_key

__all__ = ["SEAL", "CheckpointSealError", "SealKey", "check_seal", "seal", "seal_key"]
