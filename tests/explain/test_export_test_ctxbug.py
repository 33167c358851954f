"""Issue 35 done-when: every confirmed culprit set of ``bench/ctxbug.py`` exports to a pytest file that passes
offline and fails when the culprit is changed back in (a mutation check: the generated tests run in a subprocess).

By default the noiseless cells of the ``--quick`` suite run (every pattern x culprit kind, sizes 5-150); set
``AGENTFOOTPRINT_CTXBUG_EXPORT=full`` for the whole ``--quick`` suite (168 instances, about four minutes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentfootprint.explain import export_test, freeze_proof

BENCH = Path(__file__).parents[2] / "bench"
FACTORY = """import sys
sys.path.insert(0, {bench!r})
from ctxbug import build_instance


def agent():
    return build_instance({index}, {pattern!r}, {kinds!r}, {size}, {noise}).agent
"""
CULPRITS = re.compile(r"^CULPRITS: list\[list\[str\]\] = (.*)$", re.M)


def _ctxbug() -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        import ctxbug
    finally:
        sys.path.remove(str(BENCH))
    return ctxbug


def _pytest(folder: Path) -> tuple[int, int, str]:
    """(passed, failed, log) of the tests in ``folder``, run in a fresh interpreter there."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(folder)},
    )
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    passed = re.search(r"(\d+) passed", tail)
    failed = re.search(r"(\d+) failed", tail)
    return int(passed.group(1)) if passed else 0, int(failed.group(1)) if failed else 0, done.stdout[-3000:]


async def test_every_confirmed_culprit_set_exports_to_a_test_that_passes_and_fails_with_the_culprit_back_in(
    tmp_path: Path,
) -> None:
    ctxbug = _ctxbug()
    specs = list(enumerate(ctxbug.suite(True)))
    if os.environ.get("AGENTFOOTPRINT_CTXBUG_EXPORT") != "full":
        specs = [(i, s) for i, s in specs if s[3] == 0.0]
    good, bad = tmp_path / "good", tmp_path / "mutated"
    good.mkdir()
    bad.mkdir()
    files = sets = 0
    for index, (pattern, kinds, size, noise) in specs:
        inst = await ctxbug.plant(index, pattern, kinds, size, noise)
        run = await inst.agent.run(ctxbug.QUESTION, identity=ctxbug.WHO, seed=inst.seed)
        report = await ctxbug.localize(inst)
        if not report.confirmed_sets:
            continue
        proof = await freeze_proof(report, run, outcome_changed=ctxbug.flipped)
        assert [tuple(c.ids) for c in proof.culprit_sets] == [c.ids for c in report.confirmed_sets]
        factory = FACTORY.format(bench=str(BENCH), index=index, pattern=pattern, kinds=kinds, size=size, noise=noise)
        for folder in (good, bad):
            (folder / f"ctxbug_case_{index}.py").write_text(factory)
        text = export_test(proof, good / f"test_case_{index}.py", factory=f"ctxbug_case_{index}:agent").read_text()
        found = CULPRITS.search(text)
        assert found is not None
        back_in = [ids[1:] for ids in (c.ids for c in proof.culprit_sets)]  # each set's first culprit changed back in
        (bad / f"test_case_{index}.py").write_text(CULPRITS.sub(f"CULPRITS: list[list[str]] = {back_in!r}", text))
        files += 1
        sets += len(proof.culprit_sets)
    print(f"ctxbug export: {len(specs)} instances, {files} with confirmed sets, {sets} sets")
    assert files >= 20 and sets >= files
    passed, failed, log = _pytest(good)
    assert (passed, failed) == (files + sets, 0), log
    passed, failed, log = _pytest(bad)
    assert (passed, failed) == (files, sets), log  # the recorded answer still holds; every flip test fails
