"""Fixture logs for the comparison tests, made by real in-process evals (offline models).

``cmpfix/<name>`` is the offline lexicon baseline (`EmpathyBaselineAPI`, reused, not
copied) under a name of its own, that can refuse chosen dialogs (no usable score:
unscored) or fail on them (an exception: the sample errors, as an HTTP 500 would).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import eval, score
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from inspect_empathy.judge.baseline import EmpathyBaselineAPI
from inspect_empathy.scorer import empathy_scorer
from inspect_empathy.tasks import empathy, empathy_response

FIXTURES = Path(__file__).parents[1] / "fixtures"
JUDGES_JSONL = FIXTURES / "compare" / "judges.jsonl"
RESPONSE_JSONL = FIXTURES / "response" / "dialogs.jsonl"
LEXICON = "empathy_baseline/lexicon"
LENGTH = "empathy_baseline/length"


@modelapi(name="cmpfix")
class FixtureJudgeAPI(EmpathyBaselineAPI):
    """The lexicon baseline named ``model_name``; ``refuse`` / ``fail`` hold reply texts to
    refuse / fail."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008
        refuse: list[str] | None = None,
        fail: list[str] | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__("lexicon", base_url, api_key, config)
        self.model_name = model_name
        self.refuse = list(refuse or [])
        self.fail = list(fail or [])

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        prompt = input[-1].text if input else ""
        if any(reply in prompt for reply in self.fail):
            raise RuntimeError("HTTP 500: internal server error (fixture)")
        if any(reply in prompt for reply in self.refuse):
            output = ModelOutput.from_content(self.model_name, "I cannot rate this dialog.")
            output.usage = ModelUsage(input_tokens=50, output_tokens=6, total_tokens=56)
            return output
        return await super().generate(input, tools, tool_choice, config)


def records(path: Path = JUDGES_JSONL) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def reply(record: dict[str, Any]) -> str:
    return str(record["turns"][-1]["content"])


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_judges(log_dir: Path, dataset: str | Path, models: list[str], **eval_args: Any) -> None:
    """Judge ``dataset`` with each model, writing .eval logs into ``log_dir`` (all succeed)."""
    logs = eval(
        empathy(dataset=str(dataset)),
        model=models,
        log_dir=str(log_dir),
        log_format="eval",
        display="none",
        **eval_args,
    )
    assert all(log.status == "success" for log in logs)


def judge(
    log_dir: Path, dataset: Path, model: str, **model_args: Any
) -> EvalLog:
    """One judge-mode eval (errors do not stop it: errored samples stay in the log)."""
    [log] = eval(
        empathy(dataset=str(dataset)),
        model=model,
        model_args=model_args,
        log_dir=str(log_dir),
        log_format="eval",
        display="none",
        fail_on_error=False,
        retry_on_error=0,
    )
    return log


def respond(log_dir: Path, model: str, grader: str, limit: int | None = None) -> EvalLog:
    """One response-mode eval: ``model`` writes the replies, ``grader`` grades them."""
    [log] = eval(
        empathy_response(dataset=str(RESPONSE_JSONL)),
        model=model,
        model_roles={"grader": grader},
        log_dir=str(log_dir),
        log_format="eval",
        display="none",
        limit=limit,
    )
    assert log.status == "success"
    return log


def rescore(log: EvalLog, grader: str, out: Path) -> Path:
    """``log`` re-scored by ``grader`` (Inspect's ``score``), written to ``out``."""
    rescored = score(
        read_eval_log(log.location), empathy_scorer(model=grader), action="overwrite",
        display="none",
    )  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(rescored, str(out))
    return out
