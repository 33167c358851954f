"""Export a run as a hash-chained audit bundle, verify it, then show that one edited record is caught."""

import json

from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.audit import export_audit, verify_audit

if __name__ == "__main__":
    agent = refunds_agent()
    agent.run_sync(QUESTION)
    bundle = export_audit(agent)
    print("records:", len(bundle), "valid:", verify_audit(bundle).valid)
    tampered = json.loads(json.dumps(bundle))
    tampered[3]["payload"]["stage_name"] = "edited"
    check = verify_audit(tampered)
    print("after an edit: valid:", check.valid, "broken_at:", check.broken_at)
