"""A fake xAI Chat service (gRPC) on 127.0.0.1, for Inspect's own ``grok/`` provider.

Inspect's ``grok/<model>`` provider (inspect_ai/model/_providers/grok.py) talks to xAI through
the ``xai_sdk`` package over gRPC, not HTTP: ``AsyncClient(...).chat.create(...)`` then
``chat.sample()``, which is the unary ``xai_api.Chat/GetCompletion`` with ``n = 1`` (Inspect
streams, ``GetCompletionChunk``, only when the caller passes ``on_stream`` and no logprobs are
asked for, and never sends ``num_choices``). This fake implements that method with the servicer
stubs that ship inside the SDK (``xai_sdk.proto.chat_pb2_grpc``, the generated code for the
installed protobuf); every other RPC, of any xAI service, is answered ``UNIMPLEMENTED`` and kept
in ``unknown`` (``assert_no_unknown()``), so a provider that quietly switched RPC fails.

Pointing the provider at it: Inspect reads the host from ``XAI_BASE_URL`` (else
``GROK_BASE_URL``), the key from ``XAI_API_KEY`` (else ``GROK_API_KEY``). The SDK opens a TLS
channel to any host except one spelled ``localhost:<port>``, for which it uses gRPC's local
credentials (``grpc.local_channel_credentials()``, no TLS, loopback only; xai_sdk/client.py
``create_channel_credentials``); the API key still travels as ``authorization: Bearer <key>``
metadata. So the fake serves local server credentials on 127.0.0.1 and the fixture sets
``XAI_BASE_URL=localhost:<port>`` (``127.0.0.1:<port>`` would ask for TLS). No certificate and
no insecure-channel model arg are needed.

The healthy judge is the one of ``benchmarks/fake_openai.py``: it answers the rubric prompt
with a score (4, or what a ``[judge-says:N]`` marker asks for; each of ``n`` outputs draws a
score around it at a temperature above 0), or a line of reasoning and ``Score: N`` when the
prompt asks for reasoning. Per model (`grok_model_rules`, sources beside each rule): the
answer is cut at ``max_tokens`` (``REASON_MAX_LEN``); a reasoning model spends
``thinking_tokens`` of that bound before it answers and returns no logprobs; the others return
logprobs when asked, with top logprobs spread over 1-5 at the score token
(``score_top_logprobs``), at most 8 of them.

Scripting (as the fakes of tests/fake_providers.py)::

    server.script("2")                                   # every request: the judge says 2
    server.script(["3", "4"], when="Dialog 7")           # one text per output (n), cycled
    server.script(lambda request: response, times=1)     # the whole GetChatCompletionResponse
    server.script(GrokRefusal(grpc.StatusCode.INVALID_ARGUMENT, "..."), when="x")

Every ``GetCompletion`` is recorded (`GrokRequest`: the request as a dict with proto field
names, prompt, model, the gRPC status it got and the error's details).

Pytest fixture ``grok_server`` (import it, and ``grok_session_server``, into the test module):
clears a session-wide fake and points the provider's environment variables at it.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import fake_servers  # noqa: F401  (puts benchmarks/ on the import path)
import grpc
import pytest
from fake_openai import (
    RUBRIC_FORM,
    SCORE_MARKER,
    SCORE_ONLY,
    PromptRule,
    ScriptedFake,
    count_tokens,
    score_top_logprobs,
    tokens_of,
)
from google.protobuf import timestamp_pb2
from google.protobuf.json_format import MessageToDict
from xai_sdk.proto import chat_pb2, chat_pb2_grpc, sample_pb2, usage_pb2

__all__ = [
    "FakeGrok",
    "GrokModelRules",
    "GrokRefusal",
    "GrokRequest",
    "GrokRule",
    "grok_model_rules",
    "grok_server",
    "grok_session_server",
]

GrokRespond = Callable[[chat_pb2.GetCompletionsRequest], chat_pb2.GetChatCompletionResponse]
"""Builds the whole answer from the request."""

_DRAWS = (-1, 0, 0, 1, 0, -1, 1, 0)
"""Offsets from the judge's score an output at temperature > 0 draws from (as fake_openai)."""

MAX_TOP_LOGPROBS = 8
"""xai_sdk's ``chat.create`` documents ``top_logprobs`` as "An integer between 0 and 8"
(xai_sdk/chat.py). Whether the API refuses or clamps a larger value is not documented; the
fake clamps (returns at most 8)."""

THOUGHT = "The user is upset about an exam; the reply acknowledges that warmly."
"""The reasoning trace grok-3-mini returns (``reasoning_content``)."""

ENCRYPTED_THOUGHT = "ZmFrZS1lbmNyeXB0ZWQtcmVhc29uaW5n"
"""The encrypted reasoning a grok-4 family model returns when ``use_encrypted_content``."""


@dataclass(frozen=True)
class GrokRefusal:
    """A scripted gRPC error: status code and details (what the SDK's ``RpcError`` carries)."""

    code: grpc.StatusCode
    details: str


@dataclass
class GrokRule(PromptRule):
    """A scripted answer for requests whose prompt contains ``when`` (any, if None)."""

    answer: str | list[str] | GrokRespond | GrokRefusal


@dataclass(frozen=True)
class GrokRequest:
    """One ``GetCompletion`` as the fake received and answered it."""

    method: str
    body: dict[str, Any]
    """The request as a dict with proto field names (``max_tokens``, ``top_logprobs``, ``n``)."""
    prompt: str
    model: str
    status: grpc.StatusCode
    error: str | None
    rule: GrokRule | None
    metadata: dict[str, str]
    """The call's metadata (``authorization``, ``xai-sdk-version``, ...)."""


@dataclass(frozen=True)
class GrokModelRules:
    """What the fake applies to one Grok model."""

    reasons: bool
    """A reasoning model: it thinks before answering, and that counts against ``max_tokens``."""
    logprobs: bool
    """Returns logprobs when asked (a model without them answers with none, no error)."""
    reasoning_content: bool
    """Returns its reasoning trace in ``reasoning_content`` (grok-3-mini only)."""
    effort: bool
    """Accepts ``reasoning_effort`` (refused with INVALID_ARGUMENT otherwise)."""


def grok_model_rules(model: str) -> GrokModelRules:
    """The rules the fake applies to a Grok model, by name."""
    name = model.lower()
    if "non-reasoning" in name or name.startswith(("grok-2", "grok-beta", "grok-vision")):
        # Non-reasoning models, logprobs as asked. grok-3 too (next rule).
        return GrokModelRules(reasons=False, logprobs=True, reasoning_content=False, effort=False)
    if name.startswith("grok-3") and "mini" not in name:
        # grok-3 (and -fast) answers directly: it takes presence/frequency penalties and stop,
        # which reasoning models refuse ("presencePenalty, frequencyPenalty and stop parameters
        # are not supported by reasoning models", https://docs.x.ai/docs/guides/reasoning), and
        # returns logprobs: xai_sdk's chat.create documents ``logprobs`` and ``top_logprobs``
        # ("An integer between 0 and 8"); OpenRouter lists logprobs and top_logprobs among
        # grok-3's supported parameters.
        return GrokModelRules(reasons=False, logprobs=True, reasoning_content=False, effort=False)
    # Reasoning models: grok-3-mini, grok-4 and later (and names this table cannot place).
    # Reasoning counts against max_tokens: a grok-4 call stopped for length at completion
    # 1187 + reasoning 860 tokens (evalstate/fast-agent#276). Only grok-3-mini returns
    # reasoning_content; grok-4 returns encrypted reasoning when asked
    # (https://docs.x.ai/docs/guides/reasoning). reasoning_effort: grok-3-mini takes it, grok-3,
    # grok-4 and grok-4-fast-reasoning answer it with an error (same page); grok-4.3 and
    # grok-4.20-multi-agent take it (NousResearch/hermes-agent#23435, checked live 2026-05-10).
    # Logprobs: NOT VERIFIED. xAI's docs read here do not say whether reasoning models return
    # logprobs; the fake assumes they return none, silently (as OpenAI's reasoning models
    # give none), so the plugin must fall back to parsing the answer.
    effort = name.startswith(("grok-3-mini", "grok-4.3", "grok-4.20-multi-agent"))
    return GrokModelRules(
        reasons=True, logprobs=False, reasoning_content=name.startswith("grok-3-mini"),
        effort=effort,
    )  # fmt: skip


class FakeGrok(ScriptedFake):
    """The xAI Chat service (``xai_api.Chat/GetCompletion``) on 127.0.0.1, local credentials.

    ``thinking_tokens``: what a reasoning model spends before answering (capped by the
    request's ``max_tokens``: a bound it fills answers nothing, ``REASON_MAX_LEN``).
    """

    name = "grok"

    def __init__(self, thinking_tokens: int = 200) -> None:
        self.label = "grok fake"
        self._start_records()
        self.thinking_tokens = self.default_thinking_tokens = thinking_tokens
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        chat_pb2_grpc.add_ChatServicer_to_server(_ChatServicer(self), self._server)
        self._server.add_generic_rpc_handlers((_Unknown(self),))
        credentials = grpc.local_server_credentials(grpc.LocalConnectionType.LOCAL_TCP)
        self._port = self._server.add_secure_port("127.0.0.1:0", credentials)
        self._server.start()

    # -- test-facing API -------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def host(self) -> str:
        """What ``XAI_BASE_URL`` gets: ``localhost:<port>`` (local credentials, no TLS)."""
        return f"localhost:{self._port}"

    url = host

    def script(
        self,
        answer: str | list[str] | GrokRespond | GrokRefusal,
        when: str | None = None,
        times: int | None = None,
    ) -> GrokRule:
        """Answer matching requests with ``answer`` (first matching rule wins).

        A text (or a list: one per output, cycled) goes through the model's rules like the
        healthy judge's; a function builds the whole response from the request; a
        `GrokRefusal` is sent as a gRPC error.
        """
        return self._add_rule(GrokRule(answer=answer, when=when, times=times))

    def clear(self) -> None:
        """Forget rules, recorded and unknown requests; back to the defaults."""
        super().clear()
        self.thinking_tokens = self.default_thinking_tokens

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests]

    def refused(self) -> list[GrokRequest]:
        with self._lock:
            return [r for r in self.requests if r.status != grpc.StatusCode.OK]

    def stop(self) -> None:
        self._server.stop(grace=None).wait(5)

    # -- the healthy judge -------------------------------------------------------------

    def judge_text(self, prompt: str, index: int, temperature: Any) -> str:
        marker = SCORE_MARKER.search(prompt)
        score = int(marker.group(1)) if marker else self.default_score
        if isinstance(temperature, int | float) and temperature > 0:
            digest = hashlib.sha256(f"{prompt}\x00{index}".encode()).digest()
            score = min(5, max(1, score + _DRAWS[digest[0] % len(_DRAWS)]))
        if RUBRIC_FORM in prompt and not prompt.rstrip().endswith(SCORE_ONLY):
            return f"The reply names the user's feeling and responds to it.\nScore: {score}"
        return str(score)

    # -- called from server threads ----------------------------------------------------

    def handle(
        self, request: chat_pb2.GetCompletionsRequest, context: grpc.ServicerContext
    ) -> chat_pb2.GetChatCompletionResponse:
        body = MessageToDict(request, preserving_proto_field_name=True)
        prompt = _prompt_of(request)
        metadata = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
        with self._lock:
            rule = next((r for r in self.rules if r.applies(prompt)), None)
            if rule is not None:
                rule.used += 1
        status, error = grpc.StatusCode.OK, None
        response = None
        try:
            self._check(request, metadata)
            if rule is not None and isinstance(rule.answer, GrokRefusal):
                raise _Refused(rule.answer.code, rule.answer.details)
            if rule is not None and callable(rule.answer):
                response = rule.answer(request)
            else:
                response = self._answer(request, body, prompt, rule)
        except _Refused as ex:
            status, error = ex.code, ex.details
        with self._lock:
            self.requests.append(
                GrokRequest(
                    "/xai_api.Chat/GetCompletion",
                    body,
                    prompt,
                    request.model,
                    status,
                    error,
                    rule,
                    metadata,
                )  # fmt: skip
            )
        if response is None:
            context.abort(status, error or "")
        return response

    def _check(self, request: chat_pb2.GetCompletionsRequest, metadata: dict[str, str]) -> None:
        authorization = metadata.get("authorization", "")
        if not authorization.startswith("Bearer ") or not authorization[7:].strip():
            # The SDK sends the key as "authorization: Bearer <key>" metadata
            # (xai_sdk/client.py _APIAuthPlugin); the refusal's wording is not verified.
            raise _Refused(grpc.StatusCode.UNAUTHENTICATED, "Incorrect API key provided.")
        if not request.messages:
            raise _Refused(grpc.StatusCode.INVALID_ARGUMENT, "messages must not be empty")
        rules = grok_model_rules(request.model)
        if rules.reasons:
            # https://docs.x.ai/docs/guides/reasoning: "presencePenalty, frequencyPenalty and
            # stop parameters are not supported by reasoning models. Adding them in the request
            # would result in an error." The wording of that error is not verified.
            for field in ("presence_penalty", "frequency_penalty"):
                if request.HasField(field):
                    raise _Refused(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        f"Model {request.model} does not support parameter {_camel(field)}.",
                    )
            if request.stop:
                raise _Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"Model {request.model} does not support parameter stop.",
                )
        if request.HasField("reasoning_effort") and not rules.effort:
            # "Model X does not support parameter reasoningEffort" (as quoted in
            # NousResearch/hermes-agent#23435; the gRPC API's wording is not verified).
            raise _Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Model {request.model} does not support parameter reasoningEffort.",
            )
        if request.HasField("top_logprobs") and request.top_logprobs < 0:
            raise _Refused(grpc.StatusCode.INVALID_ARGUMENT, "top_logprobs must be at least 0")

    def _answer(
        self,
        request: chat_pb2.GetCompletionsRequest,
        body: dict[str, Any],
        prompt: str,
        rule: GrokRule | None,
    ) -> chat_pb2.GetChatCompletionResponse:
        rules = grok_model_rules(request.model)
        n = max(1, request.n or 1)
        temperature = body.get("temperature")
        if rule is not None and isinstance(rule.answer, str):
            texts = [rule.answer] * n
        elif rule is not None and isinstance(rule.answer, list):
            texts = [rule.answer[i % len(rule.answer)] for i in range(n)]
        else:
            texts = [self.judge_text(prompt, i, temperature) for i in range(n)]
        bound = request.max_tokens if request.HasField("max_tokens") else None
        want_logprobs = request.logprobs and rules.logprobs
        top = min(request.top_logprobs, MAX_TOP_LOGPROBS) if request.HasField("top_logprobs") else 0
        outputs, completion_tokens, reasoning_tokens = [], 0, 0
        for index, text in enumerate(texts):
            room = bound
            thought = 0
            if rules.reasons:
                thought = (
                    self.thinking_tokens if bound is None else min(self.thinking_tokens, bound)
                )
                room = None if bound is None else bound - thought
            tokens = tokens_of(text)
            cut = room is not None and len(tokens) > room
            kept = tokens[:room] if cut else tokens
            completion_tokens += len(kept)
            reasoning_tokens += thought
            message = chat_pb2.CompletionMessage(
                content="".join(kept), role=chat_pb2.MessageRole.ROLE_ASSISTANT
            )
            if rules.reasons and rules.reasoning_content:
                message.reasoning_content = THOUGHT
            elif rules.reasons and request.use_encrypted_content:
                message.encrypted_content = ENCRYPTED_THOUGHT
            output = chat_pb2.CompletionOutput(
                finish_reason=sample_pb2.FinishReason.REASON_MAX_LEN
                if cut
                else sample_pb2.FinishReason.REASON_STOP,
                index=index,
                message=message,
            )
            if want_logprobs and kept and "".join(kept):
                output.logprobs.CopyFrom(_logprobs(kept, top))
            outputs.append(output)
        prompt_tokens = count_tokens(prompt)
        return chat_pb2.GetChatCompletionResponse(
            id=f"grok-fake-{next(_IDS):06d}",
            outputs=outputs,
            created=timestamp_pb2.Timestamp(seconds=int(time.time())),
            model=request.model,
            system_fingerprint="fp_fake",
            usage=usage_pb2.SamplingUsage(
                completion_tokens=completion_tokens,
                reasoning_tokens=reasoning_tokens,
                prompt_tokens=prompt_tokens,
                prompt_text_tokens=prompt_tokens,
                total_tokens=prompt_tokens + completion_tokens + reasoning_tokens,
            ),
        )

    def _unknown(self, what: str) -> None:
        with self._lock:
            self.unknown.append(what)


class _Refused(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _ChatServicer(chat_pb2_grpc.ChatServicer):
    """``GetCompletion`` answered; every other Chat method recorded as unknown."""

    def __init__(self, fake: FakeGrok) -> None:
        self._fake = fake

    def GetCompletion(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._fake.handle(request, context)

    def GetCompletionChunk(self, request: Any, context: Any) -> Any:  # noqa: N802
        self._fake._unknown("GetCompletionChunk (streaming is not supported by the fake)")
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "streaming is not supported by the fake")

    def _not_here(self, method: str, context: Any) -> Any:
        self._fake._unknown(method)
        context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method} is not implemented by the fake")

    def StartDeferredCompletion(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._not_here("StartDeferredCompletion", context)

    def GetDeferredCompletion(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._not_here("GetDeferredCompletion", context)

    def GetStoredCompletion(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._not_here("GetStoredCompletion", context)

    def DeleteStoredCompletion(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._not_here("DeleteStoredCompletion", context)

    def CompactContext(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self._not_here("CompactContext", context)


class _Unknown(grpc.GenericRpcHandler):
    """Any RPC of another xAI service (models, tokenize, auth, ...): recorded, UNIMPLEMENTED."""

    def __init__(self, fake: FakeGrok) -> None:
        self._fake = fake

    def service(self, handler_call_details: Any) -> Any:
        method = handler_call_details.method

        def refuse(request: bytes, context: Any) -> Any:
            self._fake._unknown(method)
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method} is not implemented")

        return grpc.unary_unary_rpc_method_handler(refuse)


def _prompt_of(request: chat_pb2.GetCompletionsRequest) -> str:
    return "\n".join(c.text for m in request.messages for c in m.content if c.text)


def _logprobs(tokens: list[str], top: int) -> chat_pb2.LogProbs:
    content = []
    for token in tokens:
        alternatives = score_top_logprobs(token, max(top, 1))
        chosen = next((a["logprob"] for a in alternatives if a["token"] == token), -0.5)
        content.append(
            chat_pb2.LogProb(
                token=token,
                logprob=chosen,
                bytes=token.encode(),
                top_logprobs=[
                    chat_pb2.TopLogProb(
                        token=a["token"], logprob=a["logprob"], bytes=a["token"].encode()
                    )
                    for a in (alternatives if top else [])
                ],
            )  # fmt: skip
        )
    return chat_pb2.LogProbs(content=content)


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


_IDS = itertools.count(1)


# =====================================================================================
# pytest fixtures (import both names into the test module that uses ``grok_server``)
# =====================================================================================


@pytest.fixture(scope="session")
def grok_session_server() -> Iterator[FakeGrok]:
    """One fake for the whole session (a fixed port: Inspect may reuse a provider)."""
    server = FakeGrok()
    yield server
    server.stop()


@pytest.fixture
def grok_server(
    grok_session_server: FakeGrok, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeGrok]:
    """The fake xAI Chat service, reset, with Inspect's ``grok/`` provider pointed at it."""
    server = grok_session_server
    server.clear()
    for var in ("GROK_BASE_URL", "GROK_API_KEY", "XAI_MANAGEMENT_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XAI_BASE_URL", server.host)
    monkeypatch.setenv("XAI_API_KEY", "test")
    yield server
    server.assert_no_unknown()
