"""A JWKS endpoint for the live identity tests: ``GET /jwks.json`` serves the file at $JWKS_FILE as it is now."""

from __future__ import annotations

import json
import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


async def _jwks(_: Request) -> Response:
    with open(os.environ["JWKS_FILE"], encoding="utf-8") as handle:
        return JSONResponse(json.load(handle))


async def _health(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


def build_app() -> Starlette:
    """The JWKS server (``uvicorn jwks_served:build_app --factory``)."""
    return Starlette(routes=[Route("/jwks.json", _jwks), Route("/healthz", _health)])
