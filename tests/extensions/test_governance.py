"""Credentials needing consent, per-role skill visibility, and integrity options with their disposition event."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent, ToolContext, check_in_approved, define_skill, define_tool
from agentfootprint.agent import AgentBuildError, CallModel, Extension, RunContext
from agentfootprint.extensions.credentials import (
    AuthorizationRequired,
    CredentialConsentRequiredError,
    CredentialRequest,
    Issued,
    bearer,
    need,
    static_tokens,
)
from agentfootprint.extensions.integrity import CheckerDeadError, column_type_conflicts
from agentfootprint.providers import LLMRequest, LLMResponse, mock

URL = "https://idp.example/authorize?state=SECRET-STATE-123"


class Consent:
    """Needs a person's consent until ``granted``; then issues a token."""

    def __init__(self) -> None:
        self.granted = False
        self.requests: list[CredentialRequest] = []

    def get_credential(self, request: CredentialRequest) -> Any:
        self.requests.append(request)
        return Issued(bearer("tok-1")) if self.granted else AuthorizationRequired(authorization_url=URL)


HEADERS: list[dict[str, str]] = []


def create_issue() -> Any:
    def execute(args: dict[str, Any], ctx: ToolContext) -> str:
        HEADERS.append(ctx.service("credential").to_headers())
        return "issue #7 filed"

    return define_tool(
        name="create_issue",
        description="File an issue.",
        input_schema={"type": "object", "properties": {}},
        execute=execute,
    )


def calls_issue() -> list[Any]:
    return [{"tool_calls": [{"id": "c1", "name": "create_issue", "args": {}}]}, "Filed issue #7."]


async def test_R004_127_a_credential_needing_consent_pauses_and_the_url_never_enters_the_record() -> None:
    """R004-127: a declared credential needing 3LO consent pauses by default (on_authorization_required='pause');
    the authorization URL never enters tracked state, snapshots, narrative or events — only the caller's result."""
    HEADERS.clear()
    provider = Consent()
    events: list[Any] = []
    agent = (
        Agent.create(provider=mock(replies=calls_issue()))
        .tool(create_issue())
        .credentials(provider, needs={"create_issue": need("github", scopes=["repo"], mode="user")})
        .keep_events()
        .build()
    )
    agent.on("*", events.append)
    paused = await agent.run("file it", identity={"principal": "dana"})
    assert paused.status == "paused" and HEADERS == []
    assert paused.question == "Authorization required: a person must consent for 'github' before 'create_issue' runs."
    assert paused.extensions["credentials"]["authorization_required"][0]["authorization_url"] == URL
    surfaces = [
        json.dumps(paused.checkpoint),
        agent.last_snapshot().model_dump_json(),  # type: ignore[union-attr]
        " ".join(e.text for e in agent.last_narrative()),
        json.dumps([e.model_dump(mode="json") for e in events]),
    ]
    assert all("SECRET-STATE" not in s for s in surfaces)
    assert provider.requests[0].mode == "user" and provider.requests[0].identity.principal == "dana"  # type: ignore[union-attr]
    provider.granted = True
    done = await agent.resume(paused.checkpoint, check_in_approved(paused))  # a consent is a decision (R004-57)
    assert done.answer == "Filed issue #7." and HEADERS == [{"Authorization": "Bearer tok-1"}]
    assert "credentials" not in done.extensions


async def test_R004_127_tell_model_refuses_the_tool_and_the_turn_raises() -> None:
    """R004-127: 'tell-model' gives the model a refusal naming the service; the turn raises
    CredentialConsentRequiredError carrying the URL (the model never saw it)."""
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        return calls_issue()[0] if len(seen) == 1 else "I could not file it."

    agent = (
        Agent.create(provider=mock(respond=respond))
        .tool(create_issue())
        .credentials(Consent(), needs={"create_issue": "github"}, on_authorization_required="tell-model")
        .build()
    )
    with pytest.raises(CredentialConsentRequiredError) as info:
        await agent.run("file it")
    assert info.value.authorization_url == URL and info.value.service == "github"
    tool_msg = seen[1].messages[-1].content
    assert tool_msg.startswith("[authorization required: 'github'") and "SECRET" not in tool_msg


async def test_an_issued_credential_reaches_only_the_tool() -> None:
    HEADERS.clear()
    agent = (
        Agent.create(provider=mock(replies=calls_issue()))
        .tool(create_issue())
        .credentials(static_tokens({"github": "ghp_x"}), needs={"create_issue": "github"})
        .build()
    )
    await agent.run("go")
    assert HEADERS == [{"Authorization": "Bearer ghp_x"}]
    assert "ghp_x" not in agent.last_snapshot().model_dump_json()  # type: ignore[union-attr]
    assert repr(bearer("ghp_x")) == "<Credential kind='bearer'>"
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).credentials(Consent(), needs={}, on_authorization_required="later")  # type: ignore[arg-type]


SKILLS = [
    define_skill(id="billing", description="Billing.", body="BILLING BODY"),
    define_skill(id="admin", description="Admin.", body="ADMIN BODY"),
]


async def test_R004_119_per_role_skill_visibility_hides_what_the_checker_does_not_allow() -> None:
    """R004-119: per-role skill visibility: a checker that governs skill visibility hides the skills it does not
    allow (fail closed on throw): hidden skills leave the menu and cannot be activated."""
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        if len(seen) == 1:
            return {"tool_calls": [{"id": "r1", "name": "read_skill", "args": {"id": "admin"}}]}
        return "done"

    def checker(skill_id: str, ctx: Any) -> str:
        if skill_id == "admin":
            raise PermissionError("role service down")
        return "allow"

    agent = (
        Agent.create(provider=mock(respond=respond)).skill(SKILLS[0]).skill(SKILLS[1]).skill_visibility(checker).build()
    )
    await agent.run("help")
    menu = next(t for t in seen[0].tools if t.name == "read_skill")
    assert menu.input_schema["properties"]["id"]["enum"] == ["billing"] and "admin" not in menu.description
    result = agent.last_snapshot().state["tool_results"][0]  # type: ignore[union-attr]
    assert result["is_error"] is True and result["content"] == "Error: unknown skill. Available skills: billing."
    assert "ADMIN BODY" not in seen[1].system_prompt
    assert agent.last_snapshot().state["skills_hidden"] == [  # type: ignore[union-attr]
        {"iteration": 1, "hidden": ["admin"]},
        {"iteration": 2, "hidden": ["admin"]},
    ]


async def test_R004_15_one_disposition_event_per_leg_listener_gated_and_throw_proof() -> None:
    """R004-15: one integrity.disposition event per run (both doors: run and resume), listener-gated and
    throw-proof (a raising listener changes nothing)."""
    from agentfootprint import ask_human

    rows: list[Any] = []
    replies = [{"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "ok?"}}]}, "fine"]
    agent = Agent.create(provider=mock(replies=replies)).tool(ask_human).integrity().build()
    agent.on("integrity.disposition", lambda e: rows.append(e.payload))

    def boom(e: Any) -> None:
        raise RuntimeError("listener down")

    agent.on("integrity.disposition", boom)
    paused = await agent.run("hi")
    done = await agent.resume(paused.checkpoint, "yes")
    assert done.answer == "fine" and [r["status"] for r in rows] == ["paused", "completed"]
    checks = {r["check"]: r for r in rows[0]["rows"]}
    assert sorted(checks) == [
        "column-types",
        "dangling-reference",
        "empty-lookup",
        "external-grounds",
        "invariants",
        "offered-tool",
        "prior-turn-evidence",
        "unmapped-conclusion",
        "unsupported-claim",
    ]
    assert checks["offered-tool"]["checked"] == 1 and checks["empty-lookup"]["disposition"] == "not-armed"
    quiet = Agent.create(provider=mock(reply="x")).integrity().build()
    assert (await quiet.run("hi")).extensions["integrity"]["disposition"][0]["check"] == "offered-tool"


async def test_R004_131_integrity_options_arm_their_checks() -> None:
    """R004-131: integrity options: integrity_posture ('observe' default; 'dev' throws CheckerDeadError),
    notice_empty_lookups, notice_prior_turn_evidence, check_column_types, external_grounds."""
    empty = define_tool(
        name="find", description="Find.", input_schema={"type": "object", "properties": {}}, execute=lambda a: []
    )
    rows_tool = define_tool(
        name="rows",
        description="Rows.",
        input_schema={"type": "object", "properties": {}},
        execute=lambda a: [{"n": 1}, {"n": "two"}],
    )
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        if len(seen) == 1:
            return {"tool_calls": [{"id": "a", "name": "find", "args": {}}, {"id": "b", "name": "rows", "args": {}}]}
        return "There are 99 rows and 5 found."

    findings: list[Any] = []
    agent = (
        Agent.create(provider=mock(respond=respond))
        .tool(empty)
        .tool(rows_tool)
        .integrity(notice_empty_lookups=True, check_column_types="warn", external_grounds=["5 items on record"])
        .build()
    )
    agent.on("integrity.context_error", lambda e: findings.append(e.payload["kind"]))
    await agent.run("count")
    assert seen[1].messages[-2].content.startswith("[]\n[notice: 'find' returned nothing")
    assert findings == ["empty-lookup", "column-types", "external-grounds"]
    stored = agent.last_snapshot().state["integrity_findings"]  # type: ignore[union-attr]
    assert [f["kind"] for f in stored] == findings and stored[1]["columns"] == ["n"]
    assert column_type_conflicts('[{"a": 1, "b": null}, {"a": 2.5}]') == []

    dev = Agent.create(provider=mock(reply="ok")).integrity(integrity_posture="dev").build()
    assert (await dev.run("hi")).answer == "ok"  # a model call with no tool calls: the wire check looked

    class Shortcut(Extension):  # answers every call itself: the integrity check never sees one
        async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
            return LLMResponse(content="cached")

    dead = Agent.create(provider=mock(reply="ok")).use(Shortcut()).integrity(integrity_posture="dev").build()
    with pytest.raises(CheckerDeadError, match="offered-tool"):
        await dead.run("hi")
    observe = Agent.create(provider=mock(reply="ok")).use(Shortcut()).integrity().build()
    assert (await observe.run("hi")).answer == "cached"  # 'observe': rows only, never a failure
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).integrity(integrity_posture="strict")  # type: ignore[arg-type]
    assert CheckerDeadError("x", "y").code == "ERR_CHECKER_DEAD"


async def test_R004_131_prior_turn_evidence_notices_stale_values() -> None:
    """R004-131 (notice_prior_turn_evidence): an answer using values only an earlier turn's tools produced."""
    price = define_tool(
        name="price", description="Price.", input_schema={"type": "object", "properties": {}}, execute=lambda a: "41"
    )
    replies = [{"tool_calls": [{"id": "p", "name": "price", "args": {}}]}, "It costs 41.", "Still 41."]
    agent = Agent.create(provider=mock(replies=replies)).tool(price).integrity(notice_prior_turn_evidence=True).build()
    await agent.run("price?")
    await agent.follow_up("and now?")
    kinds = [f["kind"] for f in agent.last_snapshot().state["integrity_findings"]]  # type: ignore[union-attr]
    assert kinds == ["prior-turn-evidence"]
