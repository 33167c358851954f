"""``python -m agentfootprint.providers._local_llama_server``: llama.cpp's server, re-evaluating every prompt in full.

llama-cpp-python reuses the KV cache of the longest prefix shared with the previous request; evaluating the rest in a
different batch shape changes float rounding, so at temperature 0 one request's answer would depend on the one before.
"""

from __future__ import annotations

import functools
import runpy
from typing import Any

_MARK = "_agentfootprint_fresh_prompts"


def fresh_prompts(llama_class: Any) -> None:
    """Patch ``Llama.generate`` to drop the cached prefix first, so each answer depends only on its own prompt."""
    original = llama_class.generate
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def generate(self: Any, tokens: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("reset", True):
            self.reset()
        return original(self, tokens, *args, **kwargs)

    setattr(generate, _MARK, True)
    llama_class.generate = generate


def main() -> None:
    """Patch ``llama_cpp.Llama`` and run ``python -m llama_cpp.server`` with this process's arguments."""
    import llama_cpp

    fresh_prompts(llama_cpp.Llama)
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
