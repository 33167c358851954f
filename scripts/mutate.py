"""Seeded, sampled mutation testing of one or more modules with mutmut; prints each kill rate.

    python scripts/mutate.py agentfootprint.flow.scope [more modules] [--sample 60] [--seed 25] [--tests ...] [--all]
        [--deselect TEST_ID ...] [--timeout 120]
    make mutate MODULE=agentfootprint.hosting.identity MUTATE_TESTS="tests/hosting/test_identity_pinned.py ..."

The module's mutants are listed, a seeded sample is drawn, and mutmut runs the tests (by default the package's own,
``tests/<package>``) against each one in a scratch copy under ``.mutate/`` (git-ignored). Survivors that are known to
be equivalent (they cannot change behaviour) are listed in ``scripts/mutation-equivalents.json`` with the reason, and
are left out of the rate. Killed = a test failed or the run timed out: a mutant's tests get three times their measured
time plus ``--timeout`` seconds (mutmut's own default is 15 times, which lets a mutant that hangs a test stall the
run). On a busy machine a slow run can time out too: timeouts are named in the output so they can be rerun.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / ".mutate"
EQUIVALENTS = ROOT / "scripts" / "mutation-equivalents.json"
ALSO_COPY = ("bench", "examples", "docs", "README.md")
DETECTED = {"killed", "timeout", "caught by type check", "segfault"}


def module_path(module: str) -> Path:
    """``agentfootprint.flow.scope`` or ``src/agentfootprint/flow/scope.py`` → the path under the repo root."""
    if module.endswith(".py"):
        path = Path(module)
    else:
        path = Path("src", *module.split(".")).with_suffix(".py")
        if not (ROOT / path).exists():
            path = Path("src", *module.split("."), "__init__.py")
    if not (ROOT / path).is_file():
        sys.exit(f"no such module: {module}")
    return path


def dotted(path: Path) -> str:
    parts = path.with_suffix("").parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def default_tests(path: Path) -> list[str]:
    """The tests mirroring the module's package (``src/agentfootprint/flow/x.py`` → ``tests/flow``)."""
    package = path.parts[2] if len(path.parts) > 3 else ""
    tests = ROOT / "tests" / package
    return [str(tests.relative_to(ROOT))] if package and tests.is_dir() else ["tests"]


def list_mutants(path: Path) -> tuple[list[str], str]:
    """All mutant names of the module (sorted) and the mutated source mutmut would write."""
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.format_utils import get_mutant_name

    mutated = mutate_file_contents(str(path), (ROOT / path).read_text())
    return sorted(get_mutant_name(path, name) for name in mutated.mutant_names), mutated.code


@functools.lru_cache(maxsize=4)
def _functions(code: str) -> dict[str, Any]:
    """Every function and method of the mutated module by name, parsed once."""
    import libcst

    found: dict[str, Any] = {}
    for node in libcst.parse_module(code).body:
        if isinstance(node, libcst.FunctionDef):
            found[node.name.value] = node
        elif isinstance(node, libcst.ClassDef):
            for item in node.body.body:
                if isinstance(item, libcst.FunctionDef):
                    found.setdefault(item.name.value, item)
    return found


def change_of(name: str, mutated_code: str, path: Path) -> tuple[str, str]:
    """(function, the changed lines) of one mutant: what an equivalence entry is matched on."""
    import libcst

    mangled = name.rsplit(".", 1)[1]
    stem = mangled.partition("__mutmut_")[0]
    functions = _functions(mutated_code)
    original, mutant = (
        libcst.Module([functions[n].with_changes(name=libcst.Name(stem))]).code.strip().split("\n")
        for n in (f"{stem}__mutmut_orig", mangled)
    )
    diff = "\n".join(difflib.unified_diff(original, mutant, lineterm=""))
    lines = [
        line.strip()
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]
    function = stem[2:].replace("ǁ", ".").strip(".")  # x_func → func, xǁClassǁmethod → Class.method
    return function, "\n".join(lines)


def equivalents(module: str) -> dict[tuple[str, str], str]:
    if not EQUIVALENTS.exists():
        return {}
    entries = json.loads(EQUIVALENTS.read_text()).get(module, [])
    return {(e["function"], "\n".join(e["change"])): e["why"] for e in entries}


def prepare(work: Path, paths: list[Path], tests: list[str], seed: int, timeout: float, skip: list[str]) -> None:
    """A scratch project: the sources, the tests and a pyproject that tells mutmut what to mutate."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", ".hypothesis", "*.pyc")
    shutil.copytree(ROOT / "src", work / "src", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    extras = [name for name in ALSO_COPY if (ROOT / name).exists()]
    for name in extras:  # tests read the docs, examples and bench scripts they check
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, work / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, work / name)
    config = (ROOT / "pyproject.toml").read_text()
    config += "\n[tool.mutmut]\n" + "\n".join(
        [
            'source_paths = ["src"]',
            f"only_mutate = {json.dumps([str(p) for p in paths])}",
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
            "pytest_add_cli_args = "
            + json.dumps(
                ["-p", "no:cacheprovider", "-q", "-m", "not stack_depth", f"--hypothesis-seed={seed}"]
                + [arg for node in skip for arg in ("--deselect", node)]
            ),
            "use_git_change_detection = false",
            "track_dependencies = false",
            # wall limit per mutant = (measured + constant) * multiplier = three times the tests' time + ``timeout``
            "timeout_multiplier = 3.0",
            f"timeout_constant = {timeout / 3}",
            f"also_copy = {json.dumps(['conftest.py', *extras])}",
        ]
    )
    (work / "pyproject.toml").write_text(config + "\n")
    # mutmut calls every function through a trampoline (about three frames for one): give tests the same headroom
    (work / "conftest.py").write_text("import sys\n\nsys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))\n")


def claim(work: Path) -> None:
    """Refuse to start while another live run uses ``work`` (preparing it would delete that run's copy)."""
    lock = work.with_name(work.name + ".pid")
    try:
        os.kill(int(lock.read_text()), 0)
    except (FileNotFoundError, ValueError, ProcessLookupError):
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(str(os.getpid()))
        return
    except PermissionError:
        pass
    sys.exit(f"another run is using {work} (pid in {lock})")


def results(work: Path, path: Path) -> dict[str, str]:
    from mutmut.stats import status_by_exit_code

    meta = json.loads((work / "mutants" / (str(path) + ".meta")).read_text())
    return {name: status_by_exit_code[code] for name, code in meta["exit_code_by_key"].items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="+", help="dotted modules (agentfootprint.flow.scope) or their paths")
    parser.add_argument("--sample", type=int, default=60, help="mutants drawn per module (default 60)")
    parser.add_argument("--seed", type=int, default=25, help="sampling seed (default 25)")
    parser.add_argument("--all", action="store_true", help="every mutant, no sampling")
    parser.add_argument(
        "--tests",
        nargs="+",
        default=os.environ.get("MUTATE_TESTS", "").split() or None,
        help="test paths to run (default: $MUTATE_TESTS, else the packages' tests)",
    )
    parser.add_argument(
        "--deselect",
        nargs="+",
        default=os.environ.get("MUTATE_DESELECT", "").split(),
        help="test ids left out, e.g. ones starting a server process on the trampolined sources ($MUTATE_DESELECT)",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds a mutant's tests may run beyond 3x their time (120)"
    )
    parser.add_argument("--min", type=float, default=None, help="exit 1 when a kill rate is below this percent")
    args = parser.parse_args()

    paths = list(dict.fromkeys(module_path(m) for m in args.modules))
    tests = args.tests or list(dict.fromkeys(t for p in paths for t in default_tests(p)))
    plan: list[tuple[Path, str, list[str], list[str], str]] = []
    for path in paths:
        names, mutated_code = list_mutants(path)
        everything = args.all or args.sample >= len(names)
        chosen = names if everything else sorted(random.Random(args.seed).sample(names, args.sample))
        plan.append((path, dotted(path), names, chosen, mutated_code))
        print(f"{dotted(path)}: {len(chosen)} of {len(names)} mutants (seed {args.seed})", flush=True)
    every = [name for *_, chosen, _ in plan for name in chosen]
    if not every:
        print("no mutants")
        return 0
    print(f"tests: {' '.join(tests)}", flush=True)

    work = SCRATCH / (dotted(paths[0]) if len(paths) == 1 else f"{dotted(paths[0])}+{len(paths) - 1}")
    if args.tests or args.deselect:  # its own scratch copy, so runs of one module with other tests can run at once
        chosen_tests = json.dumps([tests, args.deselect]).encode()
        work = work.with_name(f"{work.name}-{hashlib.sha256(chosen_tests).hexdigest()[:8]}")
    claim(work)
    prepare(work, paths, tests, args.seed, args.timeout, args.deselect)
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    log = work / "mutmut.log"
    print(f"progress: {log}", flush=True)
    with log.open("w") as out:  # written as it runs, so a slow mutant shows where it is
        code = subprocess.run(
            [str(mutmut), "run", "--max-children", "1", *every], cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT
        ).returncode
    if code != 0:
        print(log.read_text()[-3000:])
        sys.exit(f"mutmut failed (exit {code}); full log: {log}")

    below = False
    lines: list[str] = []
    for path, module, names, chosen, mutated_code in plan:
        if not chosen:
            lines.append(f"{module}: no mutants")
            continue
        status = results(work, path)
        known = equivalents(module)
        counts: Counter[str] = Counter()
        for name in chosen:
            state = status.get(name, "not checked")
            if state in DETECTED:
                counts["killed"] += 1
                if state == "timeout":  # a hang, or only a slow run on a busy machine: named so it can be rerun
                    counts["timeout"] += 1
                    print(f"timeout (counted killed): {name}")
                continue
            function, change = change_of(name, mutated_code, path)
            if (function, change) in known:
                counts["equivalent"] += 1
                continue
            counts["survived"] += 1
            print(f"\n{state}: {name}")
            print("    " + change.replace("\n", "\n    "))
        scored = counts["killed"] + counts["survived"]
        rate = 100.0 * counts["killed"] / scored if scored else 100.0
        below = below or (args.min is not None and rate < args.min)
        lines.append(
            f"{module}: {rate:.1f}% killed ({counts['killed']} of {scored} non-equivalent, "
            f"{counts['timeout']} by timeout; {counts['equivalent']} equivalent; "
            f"sample {len(chosen)} of {len(names)}, seed {args.seed})"
        )
    print("\n" + "\n".join(lines))
    return 1 if below else 0


if __name__ == "__main__":
    raise SystemExit(main())
