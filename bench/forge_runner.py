#!/usr/bin/env python3
"""Drive forge's WorkflowRunner with a Millforge scripted conversation, for bench/forge_compare.sh.

The default workflow is forge's rendering of fixtures/harness/golden.yaml: the same five tools, the
same required step, prerequisites (write_report needs collect_context with the same path; each
terminal needs what the harness's terminal node needs) and budgets where forge's runner exposes
them. The artifact tools write what Millforge's artifact producer writes (the arguments as
canonical JSON), so the two runs can be compared file for file. With --scenario the workflow is
forge's own eval scenario of that name (tests/eval/scenarios/), run as forge's eval runner runs it
(its budgets, the terminal's arguments captured and given to the scenario's validator), and the
script is a trajectory of fixtures/harness/forge/ with its arguments read as forge's tools name
them. The model is a scripted LLMClient that answers each call with the next step of a Millforge
scripted file (docs/formats/scripted.md).

    forge_runner.py --forge DIR --script FILE --artifacts DIR             one run, prints its end
    forge_runner.py --forge DIR --script FILE --artifacts DIR --repeat N  N runs, prints timing
    forge_runner.py --forge DIR --script FILE --decisions                 what forge decided
    forge_runner.py --forge DIR --scenario NAME --script FILE             the same, on a scenario

--budget-tokens, --phase-thresholds and --warning-thresholds give forge's ContextManager a
harness's context policy (warnings through forge's default_context_warning); with --decisions each
model call lists the context warning its request ended with.

DIR is an extracted forge snapshot (src/forge, and tests/eval/scenarios for --scenario). Only
forge's core is imported, so httpx (its HTTP clients' dependency) is not needed; pydantic 2 is. On
Python 3.11 the one 3.12-only statement of forge.core.workflow (a `type` alias) is read as a plain
assignment while it is loaded; the snapshot's files are not changed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
import types
from typing import Any


def bare_package(name: str, path: str) -> None:
    """Registers package NAME at PATH without running its __init__.py."""
    pkg = types.ModuleType(name)
    pkg.__path__ = [path]  # type: ignore[attr-defined]
    sys.modules[name] = pkg


def load_forge(snapshot: str) -> types.ModuleType:
    """Imports forge.core.runner from SNAPSHOT/src/forge without running the __init__.py of forge
    and forge.clients, which import every HTTP client (and so httpx); the runner needs only
    forge.clients.base of them."""
    src = os.path.join(snapshot, "src")
    root = os.path.join(src, "forge")
    if not os.path.isfile(os.path.join(root, "core", "runner.py")):
        raise SystemExit(f"forge_runner: no forge package under {src}")
    bare_package("forge", root)
    bare_package("forge.clients", os.path.join(root, "clients"))
    if sys.version_info < (3, 12):
        sys.meta_path.insert(0, _TypeAliasFinder(os.path.join(root, "core", "workflow.py")))
    import forge.core.runner  # noqa: F401  (the import is the point)

    return sys.modules["forge"]


class _TypeAliasLoader(importlib.machinery.SourceFileLoader):
    def source_to_code(self, data, path, *, _optimize=-1):  # type: ignore[override]
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        text = "\n".join(
            line[len("type "):] if line.startswith("type ") and " = " in line else line
            for line in text.split("\n")
        )
        return compile(text, path, "exec", dont_inherit=True, optimize=_optimize)


class _TypeAliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self, path: str) -> None:
        self.path = path

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[override]
        if fullname != "forge.core.workflow":
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.path, loader=_TypeAliasLoader(fullname, self.path)
        )


def canonical_file(value: Any) -> str:
    # Millforge's canonical JSON for these arguments (ASCII strings, sorted keys, no spaces).
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def build_workflow(artifacts: str | None):
    from pydantic import BaseModel, Field

    from forge.core.workflow import ToolDef, ToolSpec, Workflow

    class CollectParams(BaseModel):
        path: str = Field(description="Workspace path to collect from")

    class ReportParams(BaseModel):
        path: str
        body: str

    class FailureParams(BaseModel):
        reason: str

    class SummaryParams(BaseModel):
        summary: str

    class BlockedParams(BaseModel):
        summary: str
        blocker: str | None = None

    def producer(artifact_id: str):
        def run(**args: Any) -> str:
            content = canonical_file(args)
            if artifacts is not None:
                tmp = os.path.join(artifacts, f".{artifact_id}.tmp")
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(content)
                os.replace(tmp, os.path.join(artifacts, artifact_id))
            return f"Wrote artifact {artifact_id} ({len(content.encode())} bytes)"

        return run

    def terminal(result: str):
        return lambda **args: {"terminal_result": result, "summary": args.get("summary", "")}

    def tool(name, description, params, fn, prerequisites=()):
        spec = ToolSpec(name=name, description=description, parameters=params)
        return ToolDef(spec=spec, callable=fn, prerequisites=list(prerequisites))

    tools = {
        "collect_context": tool("collect_context",
                                "Collect the context a report is written from and keep it as a draft.",
                                CollectParams, producer("draft")),
        "write_report": tool("write_report", "Write the report for the collected path.",
                             ReportParams, producer("report"),
                             [{"tool": "collect_context", "match_arg": "path"}]),
        "write_failure_report": tool("write_failure_report",
                                     "Write a report explaining why the work cannot be completed.",
                                     FailureParams, producer("failure_report"), ["collect_context"]),
        "finish_success": tool("finish_success", "Declare the stage complete.", SummaryParams,
                               terminal("BUILDER_COMPLETE"), ["collect_context", "write_report"]),
        "finish_blocked": tool("finish_blocked", "Declare the stage blocked.", BlockedParams,
                               terminal("BLOCKED"), ["collect_context", "write_failure_report"]),
    }
    return Workflow(
        name="millforge.test.golden.compiler.v1",
        description="Millforge's golden harness",
        tools=tools,
        required_steps=["collect_context"],
        terminal_tool=["finish_success", "finish_blocked"],
        system_prompt_template="Preserve this first instruction.\nPreserve this second instruction.\n",
    )


# How the arguments of a fixtures/harness/forge/ trajectory read in forge's scenario tools: ours run
# real tools (paths, patterns) and answer in `summary`; forge's take the names its scenarios give.
# Only tools whose arguments forge reads (its validators, its checking tools) need a mapping: the
# others are lambdas that take any keywords.
def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


_SCENARIO_ARGS: dict[str, dict[str, Any]] = {
    "basic_2step": {"summarize": lambda a: {"content": a.get("summary", "")}},
    "basic_2step_tre": {"get_country_info": lambda a: {"country": _stem(a.get("path", ""))},
                        "summarize": lambda a: {"content": a.get("summary", "")}},
    "sequential_3step": {"report": lambda a: {"findings": a.get("summary", "")}},
    "error_recovery": {"fetch": lambda a: {"count": _stem(a.get("path", ""))},
                       "summarize": lambda a: {"content": a.get("summary", "")}},
    "tool_selection": {"respond": lambda a: {"answer": a.get("summary", "")}},
    "argument_fidelity": {"lookup_entity": lambda a: {"entity": a.get("pattern", "")},
                          "fetch_details": lambda a: {"entity_id": _stem(a.get("path", ""))}},
    "sequential_reasoning": {"recommend": lambda a: {"patient_id": a.get("patient_id", ""),
                                                     "findings": a.get("summary", "")}},
    "conditional_routing": {"diagnose": lambda a: {"diagnosis": a.get("summary", ""),
                                                   "action": a.get("action", "")}},
}


def basic_2step_tre(base):
    """forge's basic_2step_stateful_tre, as its tests/eval/scenarios/_stateful_plumbing.py defined
    it until forge's commit e64ba39 removed it from the eval suite (ADR-010 still names it): the
    country lookup raises forge's ToolResolutionError for a country it does not know. BASE is the
    scenarios' _base module."""
    from pydantic import BaseModel, Field

    from forge.core.workflow import ToolDef, ToolSpec, Workflow
    from forge.errors import ToolResolutionError

    class CountryParams(BaseModel):
        country: str = Field(description="Country name")

    class ContentParams(BaseModel):
        content: str = Field(description="The content to summarize")

    data = {
        "france": "Capital: Paris. Population: 2.1 million (city), 67 million (country).",
        "japan": "Capital: Tokyo. Population: 14 million (city), 125 million (country).",
    }

    def get_country_info(country: str) -> str:
        key = country.strip().lower()
        if key in data:
            return data[key]
        raise ToolResolutionError(f"No entry found for '{country}'. Try another country.")

    tools = {
        "get_country_info": ToolDef(
            spec=ToolSpec(name="get_country_info", description="Look up facts about a country.",
                          parameters=CountryParams),
            callable=lambda **kw: get_country_info(kw["country"])),
        "summarize": ToolDef(
            spec=ToolSpec(name="summarize",
                          description="Summarize content and provide the final answer.",
                          parameters=ContentParams),
            callable=lambda **kw: kw.get("content", "")),
    }
    workflow = Workflow(
        name="basic_2step_stateful_tre",
        description="Look up country facts with ToolResolutionError on miss",
        tools=tools, required_steps=["get_country_info"], terminal_tool="summarize",
        system_prompt_template=(
            "You are a helpful assistant. Use the available tools to answer "
            "the user's question. First use get_country_info to retrieve "
            "information, then use summarize to provide the final answer."))
    return base.EvalScenario(
        name="basic_2step_stateful_tre",
        description="Stateful 2-step with ToolResolutionError — model must retry with a different key.",
        workflow=workflow, user_message="What is the capital of France?",
        validate=lambda args: base._check(args.get("content", ""), ["paris", "capital"]),
        tags=["stateful", "plumbing"], ideal_iterations=3)


def load_scenario(snapshot: str, name: str):
    """forge's EvalScenario NAME from SNAPSHOT/tests/eval/scenarios (its plumbing and model-quality
    modules; the package's __init__.py, which imports every scenario module, is not run), or
    basic_2step_tre, which forge_runner carries (basic_2step_tre above)."""
    path = os.path.join(snapshot, "tests", "eval", "scenarios")
    if not os.path.isfile(os.path.join(path, "_plumbing.py")):
        raise SystemExit(f"forge_runner: no tests/eval/scenarios under {snapshot}")
    bare_package("forge_scenarios", path)
    if name == "basic_2step_tre":
        return basic_2step_tre(importlib.import_module("forge_scenarios._base"))
    for module in ("_plumbing", "_model_quality"):
        mod = importlib.import_module(f"forge_scenarios.{module}")
        if hasattr(mod, name):
            return getattr(mod, name)
    raise SystemExit(f"forge_runner: forge has no plumbing or model-quality scenario {name}")


def translate(steps: list[dict[str, Any]], scenario: str) -> list[dict[str, Any]]:
    mapping = _SCENARIO_ARGS.get(scenario, {})
    out = []
    for step in steps:
        step = dict(step)
        calls = []
        for c in step.get("tool_calls") or []:
            c = dict(c)
            if isinstance(c.get("arguments"), dict) and c["name"] in mapping:
                c["arguments"] = mapping[c["name"]](c["arguments"])
            calls.append(c)
        if calls:
            step["tool_calls"] = calls
        out.append(step)
    return out


def make_client(steps: list[dict[str, Any]], log: list[dict[str, Any]]):
    from forge.clients.base import LLMClient, decode_tool_args
    from forge.core.workflow import TextResponse, ToolCall

    class ScriptedClient(LLMClient):
        """Answers each call with the next scripted step, as Millforge's scripted model does."""

        api_format = "openai"
        model = "scripted"

        def __init__(self) -> None:
            self.steps = list(steps)

        async def send(self, messages, tools=None, sampling=None, passthrough=None,
                       inbound_anthropic_body=None, raw_openai_tools=None, extra_headers=None):
            if not self.steps:
                raise RuntimeError("scripted model has no response remaining")
            step = self.steps.pop(0)
            if "failure" in step:
                raise RuntimeError(step["failure"])
            calls = step.get("tool_calls") or []
            entry = {"call": len(log) + 1, "reply": "tool_calls" if calls else "text"}
            # forge sends a context warning as one more user message at the end of this request
            # only (inference.py); it is what this call was told.
            last = messages[-1] if messages else {}
            if last.get("role") == "user" and str(last.get("content", "")).startswith(
                    "[Context usage:"):
                entry["context_warning"] = last["content"]
            log.append(entry)
            if not calls:
                return TextResponse(content=step.get("content", ""))
            reasoning = step.get("content") or None
            out = []
            for c in calls:
                raw = c["arguments"]
                args = decode_tool_args(raw) if isinstance(raw, str) else raw
                out.append(ToolCall(tool=c["name"], args=args, reasoning=reasoning))
            return out

        async def send_stream(self, *args, **kwargs):  # stream=False: never called
            raise NotImplementedError

        async def get_context_length(self):
            return None

    return ScriptedClient()


def run_once(steps, artifacts, log, messages, scenario=None, overrides=None):
    from forge.context.manager import ContextManager, default_context_warning
    from forge.context.strategies import TieredCompact
    from forge.core.runner import WorkflowRunner
    from forge.core.workflow import ToolDef, Workflow

    capture: dict[str, Any] = {}
    if scenario is None:
        # The golden harness's budgets and context policy, as far as WorkflowRunner takes them
        # (its step enforcer keeps forge's defaults: 3 premature terminals, 2 prerequisite
        # violations).
        workflow = build_workflow(artifacts)
        budget, phases = 8192, (0.5, 0.75, 0.95)
        limits = {"max_iterations": 6, "max_retries_per_step": 2, "max_tool_errors": 2}
        user = "Carry out this stage with the tools provided, then call a terminal tool."
    else:
        # As forge's eval runner runs a scenario: its budgets, the terminal's arguments captured.
        base = scenario.workflow
        tools = dict(base.tools)
        for name in base.terminal_tools:
            def capturing(_fn=base.get_callable(name), **kwargs: Any) -> Any:
                capture["args"] = kwargs
                return _fn(**kwargs)

            tools[name] = ToolDef(spec=base.tools[name].spec, callable=capturing,
                                  prerequisites=base.tools[name].prerequisites)
        workflow = Workflow(name=base.name, description=base.description, tools=tools,
                            required_steps=base.required_steps, terminal_tool=base.terminal_tool,
                            system_prompt_template=base.system_prompt_template)
        budget, phases = scenario.budget_tokens, (0.6, 0.75, 0.9)
        limits = {"max_iterations": scenario.max_iterations,
                  "max_retries_per_step": scenario.max_retries_per_step,
                  "max_tool_errors": scenario.max_tool_errors}
        user = scenario.user_message
    # A harness's context policy where it differs from the defaults above: its budget, its
    # compaction phases and its warning thresholds (forge's context_thresholds, with forge's own
    # default_context_warning as the callback).
    overrides = overrides or {}
    budget = overrides.get("budget_tokens") or budget
    phases = overrides.get("phase_thresholds") or phases
    warnings = overrides.get("warning_thresholds")
    context = ContextManager(
        strategy=TieredCompact(keep_recent=2, phase_thresholds=phases), budget_tokens=budget,
        context_thresholds=warnings,
        on_context_threshold=default_context_warning if warnings else None)
    runner = WorkflowRunner(client=make_client(steps, log), context_manager=context,
                            on_message=messages.append, **limits)
    try:
        end: dict[str, Any] = {"ok": True, "result": asyncio.run(runner.run(workflow, user))}
    except Exception as exc:  # forge ends a failed run with an exception; report its class
        end = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
    if scenario is not None and scenario.validate is not None:
        end["validated"] = bool(scenario.validate(capture["args"])) if "args" in capture else None
    return end


# What each correction forge sent is, in Millforge's violation kinds.
_PREFIXES = [
    ("[StepEnforcementError]", "premature_terminal"),
    ("[PrerequisiteError]", "prerequisite"),
    ("[UnknownTool]", "unknown_tool"),
    ("[ToolArgValidationError]", "malformed_arguments"),
    ("[ToolError]", "tool_error"),
    ("[ToolResolutionError]", "soft_tool_error"),
]


def decisions(log, messages) -> dict[str, Any]:
    """forge's decisions per model call, from the messages the runner emitted (on_message)."""
    from forge.core.messages import MessageRole, MessageType

    per_call: list[dict[str, Any]] = []
    by_kind: dict[str, int] = {}
    call = 0
    current: dict[str, Any] | None = None
    for m in messages:
        kind = m.metadata.type
        if kind in (MessageType.SYSTEM_PROMPT, MessageType.USER_INPUT):
            continue
        # A new model call starts with the assistant's output (text, reasoning or calls).
        if m.role == MessageRole.ASSISTANT and (current is None or current["closed"]):
            call += 1
            sent = log[call - 1] if call <= len(log) else {}
            current = {"call": call, "reply": sent.get("reply", "?"), "decisions": [],
                       "closed": False}
            if "context_warning" in sent:
                current["context_warning"] = sent["context_warning"]
            per_call.append(current)
        if current is None:
            continue
        text = m.content or ""
        if kind == MessageType.TOOL_CALL:
            # A call without arguments is marked `name{}`, as bench/forge_compare.sh marks ours.
            current["calls"] = [tc.name + ("{}" if tc.args == {} else "")
                                for tc in (m.tool_calls or [])]
            if current["reply"] == "text":
                current["decisions"].append("rescue")
        elif kind == MessageType.RETRY_NUDGE and m.role == MessageRole.USER:
            current["decisions"].append("text_response")
            current["closed"] = True
        elif m.role == MessageRole.TOOL:
            found = next((k for p, k in _PREFIXES if text.startswith(p)), None)
            current["decisions"].append(found or "executed")
            current["closed"] = True
    for c in per_call:
        c.pop("closed")
        c["decisions"] = sorted(set(c["decisions"]), key=c["decisions"].index)
        for d in c["decisions"]:
            if d != "executed":
                by_kind[d] = by_kind.get(d, 0) + 1
    return {"model_calls": len(log), "per_call": per_call, "violations_by_kind": by_kind}


def fractions(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--forge", required=True, help="an extracted forge snapshot (src/, tests/)")
    ap.add_argument("--scenario", help="run forge's eval scenario of this name instead")
    ap.add_argument("--script", required=True, help="a Millforge scripted model file")
    ap.add_argument("--artifacts", help="where the artifact tools write (default: nowhere)")
    ap.add_argument("--repeat", type=int, default=0, help="time this many runs in this process")
    ap.add_argument("--decisions", action="store_true", help="print forge's decisions per call")
    ap.add_argument("--budget-tokens", type=int, help="the context budget (a harness's budget_tokens)")
    ap.add_argument("--phase-thresholds", type=fractions,
                    help="compaction phases, e.g. 0.6,0.75,0.9 (a harness's phase_thresholds)")
    ap.add_argument("--warning-thresholds", type=fractions,
                    help="context warnings, e.g. 0.5,0.65,0.8 (a harness's warning_thresholds)")
    args = ap.parse_args()

    load_forge(args.forge)
    with open(args.script, encoding="utf-8") as f:
        steps = json.load(f)["steps"]
    scenario = None
    if args.scenario:
        scenario = load_scenario(args.forge, args.scenario)
        steps = translate(steps, args.scenario)
    overrides = {"budget_tokens": args.budget_tokens, "phase_thresholds": args.phase_thresholds,
                 "warning_thresholds": args.warning_thresholds}

    if args.repeat > 0:
        run_once(steps, args.artifacts, [], [], scenario, overrides)  # warm: imports, pydantic caches
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            end = run_once(steps, args.artifacts, [], [], scenario, overrides)
            if not end["ok"]:
                print(json.dumps(end), file=sys.stderr)
                return 1
        per_run = (time.perf_counter() - t0) / args.repeat
        print(json.dumps({"runs": args.repeat, "seconds_per_run": round(per_run, 6)}))
        return 0

    log: list[dict[str, Any]] = []
    messages: list[Any] = []
    end = run_once(steps, args.artifacts, log, messages, scenario, overrides)
    out: dict[str, Any] = {"end": end, "model_calls": len(log)}
    if args.decisions:
        out.update(decisions(log, messages))
    print(json.dumps(out, sort_keys=True))
    return 0 if end["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
