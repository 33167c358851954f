"""The flagship: a refunds agent misled by a planted fact — backtrack it, then prove the culprit by ablation."""

from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
from agentfootprint.explain import backtrack, localize_sync

if __name__ == "__main__":
    agent = refunds_agent()
    print("answer:", agent.run_sync(QUESTION).answer)
    print(backtrack(agent).source("vip-override-fact"))
    report = localize_sync(agent, samples=3, outcome_changed=approved_flipped, progress=False)
    print([(s.id, s.verdict) for s in report.suspects])
