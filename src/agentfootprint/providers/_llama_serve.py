"""``python -m agentfootprint.providers._llama_serve``: llama.cpp's OpenAI-compatible server for one GGUF, on loopback.

It runs until terminated; ``LocalLLMServer`` starts it, polls ``/v1/models`` and stops it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from agentfootprint.providers._llama import start_native_server


def main(argv: list[str] | None = None) -> None:
    """Start the server from command-line arguments and block until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(prog="agentfootprint.providers._llama_serve")
    parser.add_argument("--model", required=True)
    parser.add_argument("--model-alias", default="local")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--n-threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = start_native_server(
        args.model,
        n_ctx=args.n_ctx,
        n_threads=args.n_threads,
        seed=args.seed,
        model_alias=args.model_alias,
        host=args.host,
        port=args.port,
    )
    print(f"listening on {server.listening_address}", flush=True)
    stop.wait()
    del server
    sys.exit(0)


if __name__ == "__main__":
    main()
