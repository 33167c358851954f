"""Export a run as a hash-chained audit bundle, verify it, then show that one edited record is caught."""

import json

from agentfootprint import Agent, define_fact
from agentfootprint.audit import export_audit, verify_audit
from agentfootprint.providers import mock

if __name__ == "__main__":
    agent = (
        Agent.create(provider=mock(reply="Refund DECLINED: the order is 47 days old."), model="mock-1")
        .system("You are a refunds assistant. Policy: refunds only within 30 days of purchase.")
        .fact(define_fact(id="order", data="Order A-1001: purchased 47 days ago."))
        .build()
    )
    agent.run_sync("Should order A-1001 be refunded?")
    bundle = export_audit(agent)
    print("records:", len(bundle), "valid:", verify_audit(bundle).valid)
    tampered = json.loads(json.dumps(bundle))
    tampered[3]["payload"]["stage_name"] = "edited"
    check = verify_audit(tampered)
    print("after an edit: valid:", check.valid, "broken_at:", check.broken_at)
