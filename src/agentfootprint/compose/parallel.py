"""Parallel: branches run concurrently over one run; their answers merge with a function or a model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentfootprint.compose._base import (
    Composition,
    CompositionBuildError,
    check_runner,
    checked_output,
    composition_key,
    keyed,
    member_deps,
    member_id,
    mount_input,
    mount_output,
    seed_stage,
)
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import CompositionBranchComplete, CompositionForkStart
from agentfootprint.flow import FlowChart, Scope, flow_chart
from agentfootprint.providers import LLMRequest, Message, Provider

MergeFn = Callable[[dict[str, str]], str]


def _default_merge(answers: dict[str, str]) -> str:
    return "\n\n".join(f"{name}: {answer}" for name, answer in answers.items())


class Parallel(Composition):
    """Every branch answers the same message concurrently; ``merge_with`` combines their answers."""

    kind = "Parallel"

    def __init__(
        self,
        name: str,
        members: list[tuple[str, Any]],
        merge: MergeFn | None,
        merge_llm: tuple[Provider, str, str] | None,
        fail_fast: bool,
    ) -> None:
        self._merge = merge
        self._merge_llm = merge_llm
        self._fail_fast = fail_fast
        super().__init__(name, members)

    @classmethod
    def create(cls, name: str = "parallel", *, checkpoint_key: str | bytes | None = None) -> ParallelBuilder:
        """A builder; with ``checkpoint_key`` every pause checkpoint is sealed and ``resume`` checks the seal first."""
        return ParallelBuilder(name, checkpoint_key=checkpoint_key)

    def _build_chart(self) -> FlowChart:
        taken: set[str] = set()
        children = []
        keys: list[tuple[str, str]] = []
        for index, (name, runner) in enumerate(self.members):
            sid = member_id(name, index, taken)
            key = f"branch:{name}"
            keys.append((name, key))
            children.append(
                (
                    sid,
                    name,
                    runner.chart,
                    mount_input(lambda p: str(p["input"])),
                    checked_output(runner, sid, self._branch_out(name, key)),
                    member_deps(runner),
                )
            )

        merge = self._merge
        merge_llm = self._merge_llm

        async def merge_stage(scope: Scope) -> None:
            answers = {name: str(scope.get(key, "")) for name, key in keys}
            if merge_llm is not None:
                provider, model, prompt = merge_llm
                text = "\n\n".join(f"[{n}]\n{a}" for n, a in answers.items())
                response = await provider.complete(
                    LLMRequest(system_prompt=prompt, model=model, messages=[Message(role="user", content=text)])
                )
                scope["merge_call"] = {"model": model, "prompt": prompt, "branches": list(answers)}
                scope["answer"] = response.content
            else:
                scope["answer"] = (merge or _default_merge)(answers)

        return (
            flow_chart(self.name, self._seed_and_fork, id="seed", description="Take the pipeline's input")
            .parallel(children, fail_fast=self._fail_fast, id="fork", name="Branches")
            .then("Merge", merge_stage, id="merge", description="Merge the branches' answers")
            .build()
        )

    def _seed_and_fork(self, scope: Scope) -> None:
        seed_stage(scope)
        self._emit(
            ev.COMPOSITION_FORK_START,
            lambda: CompositionForkStart(composition=self.name, branches=[n for n, _ in self.members]),
            scope.run_id or "",
        )

    def _branch_out(self, name: str, key: str) -> Callable[[Scope], dict[str, Any]]:
        mapped = mount_output(key)

        def out(sub: Scope) -> dict[str, Any]:
            result = mapped(sub)
            done = lambda: CompositionBranchComplete(composition=self.name, branch=name)  # noqa: E731
            self._emit(ev.COMPOSITION_BRANCH_COMPLETE, done, sub.run_id or "")
            return result

        return out

    def _rebuilt(self, members: list[tuple[str, Any]]) -> Parallel:
        return Parallel(self.name, members, self._merge, self._merge_llm, self._fail_fast)


class ParallelBuilder:
    def __init__(self, name: str, *, checkpoint_key: str | bytes | None = None) -> None:
        self._name = name
        self._key = composition_key(checkpoint_key)
        self._members: list[tuple[str, Any]] = []
        self._merge: MergeFn | None = None
        self._merge_llm: tuple[Provider, str, str] | None = None
        self._fail_fast = False

    def branch(self, name: str, runner: Any) -> ParallelBuilder:
        if any(n == name for n, _ in self._members):
            raise CompositionBuildError(f"Parallel '{self._name}' has two branches named '{name}'")
        self._members.append((name, check_runner(runner, f"branch '{name}'")))
        return self

    def merge_with(self, fn: MergeFn) -> ParallelBuilder:
        """Combine ``{branch name: answer}`` into the answer."""
        self._merge = fn
        return self

    def merge_with_llm(self, provider: Provider, model: str, prompt: str) -> ParallelBuilder:
        """Ask a model to combine the branches' answers (recorded like any other step)."""
        self._merge_llm = (provider, model, prompt)
        return self

    def fail_fast(self, enabled: bool = True) -> ParallelBuilder:
        self._fail_fast = enabled
        return self

    def build(self) -> Parallel:
        return keyed(Parallel(self._name, self._members, self._merge, self._merge_llm, self._fail_fast), self._key)
