"""Candidates from a language model at an OpenAI-compatible chat-completions endpoint
(docs/candidates.md): the client (retries, backoff, rate limit), the prompts schemes declare, the
reading of answers and the run that stores them with their provenance. Re-exported by
``annotation.importers`` and ``annotation.services`` through ``candidates_add --source llm``.
"""

from annotation.llm.answers import ParsedAnswer, answer_parse
from annotation.llm.client import ChatAnswer, ChatEndpoint, ChatFailed, EndpointConfig, retry_after_seconds
from annotation.llm.prompts import (
    PLACEHOLDERS,
    SYSTEM_MESSAGE,
    PromptRefused,
    candidate_prompt_offer,
    candidate_prompt_withdraw,
    default_prompt,
    prompt_check,
    prompt_render,
    prompt_sha256,
)
from annotation.llm.service import (
    LLM,
    ModelReport,
    ModelRequest,
    candidates_from_model,
    estimate_tokens,
    llm_origin,
    model_form_defaults,
)

__all__ = [
    "LLM",
    "PLACEHOLDERS",
    "SYSTEM_MESSAGE",
    "ChatAnswer",
    "ChatEndpoint",
    "ChatFailed",
    "EndpointConfig",
    "ModelReport",
    "ModelRequest",
    "ParsedAnswer",
    "PromptRefused",
    "answer_parse",
    "candidate_prompt_offer",
    "candidate_prompt_withdraw",
    "candidates_from_model",
    "default_prompt",
    "estimate_tokens",
    "llm_origin",
    "model_form_defaults",
    "prompt_check",
    "prompt_render",
    "prompt_sha256",
    "retry_after_seconds",
]
