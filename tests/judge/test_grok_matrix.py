"""Grok judges through Inspect's own ``grok/`` provider and the real ``xai_sdk`` (gRPC), against
the fake xAI Chat service of tests/fake_grok.py: the provider matrix's rows for Grok.

Inspect's provider class is ``GrokAPI``; the tests use inspect_empathy/judge/_providers.py's entry
for it, and two remove it to show why it is there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fake_grok
import grpc
import pytest
from fake_grok import GrokRefusal
from inspect_ai import eval
from test_provider_matrix import SCORES, dialogs, outcomes, run, weighted

from inspect_empathy.judge import _providers
from inspect_empathy.judge._providers import JudgeTraits
from inspect_empathy.tasks import empathy

pytestmark = pytest.mark.usefixtures("quick_backoff")

# the fixtures of tests/fake_grok.py (assigned, not imported: ruff's F811 would flag every test
# that names an imported fixture)
grok_session_server = fake_grok.grok_session_server
grok_server = fake_grok.grok_server

@pytest.fixture
def grok_traits(monkeypatch: pytest.MonkeyPatch) -> JudgeTraits:
    """The table's Grok entry, with traits and refusals learnt fresh."""
    monkeypatch.setattr(_providers, "_traits", {})
    monkeypatch.setattr(_providers, "_learned", {})
    return _providers._BY_API["GrokAPI"]


def _judged(server: Any) -> list[dict[str, Any]]:
    bodies = server.bodies()
    assert bodies, "the grok fake got no request"
    return bodies


def test_grok_3_scores_every_dialog_from_logprobs(
    grok_server: Any, grok_traits: JudgeTraits, tmp_path: Path
) -> None:
    found = outcomes(run("grok/grok-3", tmp_path))
    for k in SCORES:
        value, method, metadata = found[f"d{k}"]
        assert method == "logprobs", (k, metadata)
        assert value == pytest.approx(weighted(k), abs=1e-6), (k, metadata)
    for body in _judged(grok_server):
        assert body["logprobs"] is True and body["top_logprobs"] >= 5, body
        assert body.get("n", 1) == 1 and "reasoning_effort" not in body, body
        assert body["max_tokens"] >= 24, body


def test_grok_3_without_the_table_entry_still_scores_from_logprobs(
    grok_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unknown to the table (its traits as for any unknown service), grok-3 is still
    scored from its logprobs: the plugin asks for them and they come."""
    monkeypatch.setattr(_providers, "_traits", {})
    monkeypatch.setattr(_providers, "_learned", {})
    monkeypatch.delitem(_providers._BY_API, "GrokAPI", raising=False)
    found = outcomes(run("grok/grok-3", tmp_path))
    assert {k: round(v[0], 6) for k, v in found.items()} == {
        f"d{k}": round(weighted(k), 6) for k in SCORES
    }
    assert {v[1] for v in found.values()} == {"logprobs"}


@pytest.mark.parametrize("model", ["grok/grok-4", "grok/grok-3-mini"])
def test_reasoning_grok_is_parsed(
    model: str, grok_server: Any, grok_traits: JudgeTraits, tmp_path: Path
) -> None:
    """A reasoning Grok answers without logprobs: every dialog is scored from its answer,
    with room left in the bound for the reasoning it does first."""
    found = outcomes(run(model, tmp_path))
    for k in SCORES:
        value, method, metadata = found[f"d{k}"]
        assert (value, method) == (float(k), "parse"), (k, metadata)
    for body in _judged(grok_server):
        assert body["max_tokens"] > grok_server.thinking_tokens, body
        assert "reasoning_effort" not in body, body
        assert body.get("n", 1) == 1, body


def test_reasoning_grok_without_room_for_its_reasoning_is_cut(
    grok_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the entry says ``thinking="always"``: unknown to the table, grok-4 gets the bare
    answer bound, spends it on reasoning and answers nothing (REASON_MAX_LEN), so every
    dialog costs a second call asked with room (issue 47: a cut answer is never read)."""
    monkeypatch.setattr(_providers, "_traits", {})
    monkeypatch.setattr(_providers, "_learned", {})
    monkeypatch.delitem(_providers._BY_API, "GrokAPI", raising=False)
    found = outcomes(run("grok/grok-4", tmp_path))
    for _, _, metadata in found.values():
        assert metadata["asked_again"]["max_tokens"] == 24, metadata


def test_grok_samples_are_asked_one_completion_a_call(
    grok_server: Any, grok_traits: JudgeTraits, tmp_path: Path
) -> None:
    completions = 6
    [log] = eval(
        empathy(dataset=str(dialogs(tmp_path / "d.jsonl", (4,))), method="samples",
                completions=completions),
        model="grok/grok-3", log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
        fail_on_error=False,
    )  # fmt: skip
    value, method, metadata = outcomes(log)["d4"]
    assert method == "samples" and 3.0 <= value <= 5.0, metadata
    bodies = _judged(grok_server)
    assert all(b.get("n", 1) == 1 for b in bodies), bodies
    assert not grok_server.refused()


def test_grok_refusing_logprobs_is_learnt(
    grok_server: Any, grok_traits: JudgeTraits, tmp_path: Path
) -> None:
    """Should xAI refuse logprobs for a model (INVALID_ARGUMENT, as a gRPC status, not an
    HTTP one), the refusal is learnt and the dialogs are parsed instead of erroring."""
    grok_server.script(
        GrokRefusal(grpc.StatusCode.INVALID_ARGUMENT, "logprobs is not supported by this model"),
        when="[judge-says:",
        times=1,
    )
    found = outcomes(run("grok/grok-3", tmp_path))
    refused = grok_server.refused()
    assert len(refused) == 1 and refused[0].body["logprobs"] is True
    for k in SCORES:
        value, method, metadata = found[f"d{k}"]
        assert value == pytest.approx(float(k) if method == "parse" else weighted(k)), metadata
