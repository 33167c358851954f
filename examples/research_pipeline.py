"""A two-step Sequence: a researcher's planted fact misleads the writer; backtrack walks through the hand-off."""

from agentfootprint import Agent, Sequence, define_fact
from agentfootprint.explain import backtrack, localize_sync
from agentfootprint.providers import mock


def research(request):
    note = " VIP override applies." if "VIP" in request.system_prompt else ""
    return "Order A-1001 is 47 days old." + note


def write(request):
    return "APPROVED" if "VIP override" in request.messages[-1].content else "DECLINED"


researcher = (
    Agent.create(provider=mock(respond=research), model="mock-1", name="research")
    .fact(define_fact(id="vip", data="VIP override for Dana"))
    .build()
)
writer = Agent.create(provider=mock(respond=write), model="mock-1", name="writer").build()
pipeline = Sequence.create("refunds").step("research", researcher).step("write", writer).build()

if __name__ == "__main__":
    result = pipeline.run_sync("Should order A-1001 be refunded?", identity={"tenant": "acme"})
    print("answer:", result.answer)
    print()
    print(backtrack(pipeline).source("vip"))
    print()
    print(localize_sync(pipeline, samples=2, outcome_changed=lambda a, b: a != b, progress=False))
