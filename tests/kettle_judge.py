"""A mock judge for resume tests: shared by tests/test_resume_pins.py and
tests/stats/test_calibration_binding.py (a module of tests/, so each collects on its own)."""

from __future__ import annotations

from inspect_ai.model import ModelOutput, ModelUsage


class Judge:
    """Answers 3 and counts its calls; while ``broken``, fails every dialog but the one about
    a kettle (an eval stopped by an error part way)."""

    def __init__(self, broken: bool = False) -> None:
        self.calls, self.broken = 0, broken

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        self.calls += 1
        if self.broken and "kettle" not in messages[-1].text:
            raise RuntimeError("judge unreachable")
        output = ModelOutput.from_content("mockllm/model", "3")
        output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return output
