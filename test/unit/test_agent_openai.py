"""The openai backend over HTTP against a local fake OpenAI-compatible server: requests,
retries, errors named by cause, deadlines, native tool calls — alone and inside the agent."""
from __future__ import annotations

import socket
import time

import pytest

from raider_ros.agent.backends import make_llm
from raider_ros.agent.flow import ProgramFlowManager
from raider_ros.agent.llm import LLMError
from raider_ros.agent.prompt import IssuePrompt, PromptConfig
from raider_ros.common.tool_contract import load_toolset
from support.agent_world import kitchen_world, world_tools
from support.fake_openai_server import FakeOpenAIServer

FINAL = '{"final_response": "none", "explanation": "Apple_1 is within reach.", "grounding": ["Apple_1"]}'
MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Query: pick(Apple)"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def llm_for(srv, **kw):
    kw.setdefault("backoff_s", 0.05)
    return make_llm("openai", base_url=srv.url, model="test-model", api_key_env="RAIDER_TEST_NO_SUCH_KEY", **kw)


def complete(llm, seconds=5.0):
    return llm.complete(MSGS, deadline=time.monotonic() + seconds)


def test_request_and_reply(server):
    server.push({"content": "hello", "usage": {"prompt_tokens": 11, "completion_tokens": 2}})
    reply = complete(llm_for(server, seed=7))
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("hello", 11, 2)
    body = server.requests[0]
    assert body["model"] == "test-model" and body["temperature"] == 0 and body["seed"] == 7
    assert body["messages"] == MSGS and "tools" not in body
    # no key in the environment: a local endpoint gets a placeholder key
    assert server.request_headers[0]["authorization"] == "Bearer not-needed"


def test_models_endpoint(server):
    import openai
    client = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=5)
    assert [m.id for m in client.models.list().data] == ["fake-model"]


def test_key_from_the_named_environment_variable(server, monkeypatch):
    monkeypatch.setenv("RAIDER_TEST_KEY", "sk-test-123")
    server.push({"content": "hi"})
    make_llm("openai", base_url=server.url, api_key_env="RAIDER_TEST_KEY").complete(MSGS, deadline=time.monotonic() + 5)
    assert server.request_headers[0]["authorization"] == "Bearer sk-test-123"


def test_missing_key_for_the_official_endpoint_is_named(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="RAIDER_TEST_NO_SUCH_KEY"):
        make_llm("openai", api_key_env="RAIDER_TEST_NO_SUCH_KEY")


def test_429_with_retry_after_is_retried(server):
    server.push({"status": 429, "retry_after": 0.3}, {"content": "after the wait"})
    reply = complete(llm_for(server))
    assert reply.text == "after the wait"
    assert len(server.requests) == 2
    assert server.request_times[1] - server.request_times[0] >= 0.28   # Retry-After honoured


def test_500_then_success(server):
    server.push({"status": 500}, {"status": 502}, {"content": "ok now"})
    assert complete(llm_for(server)).text == "ok now"
    assert len(server.requests) == 3


@pytest.mark.parametrize("spec, reason", [
    ({"status": 429, "retry_after": 0.05}, "HTTP 429 (rate limited)"),
    ({"status": 500, "message": "boom"}, "HTTP 500 (server error): boom"),
    ({"truncated": True}, "broke off"),
    ({"malformed": True}, "garbage answer"),
    ({"empty_choices": True}, "empty answer"),
    ({"content": ""}, "empty answer"),
])
def test_persistent_failures_name_their_cause(server, spec, reason):
    server.default = spec
    with pytest.raises(LLMError) as e:
        complete(llm_for(server, max_retries=2))
    assert reason in e.value.reason and "gave up after 3 attempts" in e.value.reason
    assert len(server.requests) == 3


@pytest.mark.parametrize("status, hint", [(401, "check the API key"), (404, "unknown model"), (400, "")])
def test_client_errors_are_not_retried(server, status, hint):
    server.default = {"status": status, "message": "nope"}
    with pytest.raises(LLMError) as e:
        complete(llm_for(server))
    assert e.value.reason.startswith(f"HTTP {status}") and hint in e.value.reason
    assert not e.value.retryable and len(server.requests) == 1


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_endpoint():
    llm = make_llm("openai", base_url=f"http://127.0.0.1:{_closed_port()}/v1", backoff_s=0.05, max_retries=1)
    with pytest.raises(LLMError) as e:
        complete(llm)
    assert e.value.reason.startswith("unreachable: cannot connect to http://127.0.0.1:")


def test_hanging_server_times_out_within_the_deadline(server):
    server.default = {"hang": True}
    llm = llm_for(server)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as e:
        complete(llm, seconds=1.0)
    assert time.monotonic() - t0 < 1.0 + 0.5
    assert "timeout" in e.value.reason


def test_retry_after_longer_than_the_deadline_gives_up_at_once(server):
    server.default = {"status": 429, "retry_after": 30}
    t0 = time.monotonic()
    with pytest.raises(LLMError) as e:
        complete(llm_for(server), seconds=2.0)
    assert time.monotonic() - t0 < 1.0
    assert "no time left to retry" in e.value.reason


def test_native_tool_calls_become_internal_calls(server):
    toolset = load_toolset("household")
    server.push({"content": None, "tool_calls": [
        {"name": "check_obj_relationship", "arguments": {"obj": "Mug_1", "relationship": "blocking"}},
        {"name": "robot_holding", "arguments": "{}"},
        {"name": "dist_to_target", "arguments": '{"target": "Mug_1"'}]})
    reply = complete(llm_for(server, tool_mode="native", tools=toolset))
    assert reply.tool_calls[0] == {"tool": "check_obj_relationship", "args": ["blocking", "Mug_1"]}  # schema order
    assert reply.tool_calls[1] == {"tool": "robot_holding", "args": []}
    assert reply.tool_calls[2]["tool"] == "dist_to_target" and "not JSON" in reply.tool_calls[2]["error"]
    sent = server.requests[0]["tools"]
    assert [t["function"]["name"] for t in sent] == toolset.names
    assert sent[0]["function"]["parameters"]["type"] == "object"


def test_native_mode_needs_tools():
    with pytest.raises(ValueError, match="needs tools"):
        make_llm("openai", base_url="http://127.0.0.1:1/v1", tool_mode="native")


# --------------------------------------------------------------------------- inside the agent
def agent_for(srv, time_limit_s=5.0, **kw):
    return ProgramFlowManager(llm_for(srv, **kw), world_tools(kitchen_world()), IssuePrompt("household"),
                              time_limit_s=time_limit_s, max_turns=4)


def test_agent_over_http_text_protocol(server):
    server.push({"content": 'Step 1 - GROUND\ncall_tool{"tool": "object_detection", "args": []}\n'
                            'call_tool{"tool": "dist_to_target", "args": ["Apple_1"]}'},
                {"content": f"Step 4 - ISSUE\n{FINAL}"})
    res = agent_for(server).run("pick(Apple)")
    assert (res.status, res.issue, res.grounding, len(res.tool_calls)) == ("ok", "none", ["Apple_1"], 2)
    assert res.backend == "openai:test-model" and not res.tokens_estimated
    second = server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user", "user"]
    assert second[3]["content"].startswith("Call to tool object_detection with args [] returned [")


def test_agent_over_http_native_tools(server):
    server.push({"content": None, "tool_calls": [{"name": "dist_to_target", "arguments": {"target": "Apple_1"}}]},
                {"content": FINAL})
    toolset = load_toolset("household")
    pfm = ProgramFlowManager(llm_for(server, tool_mode="native", tools=toolset), world_tools(kitchen_world()),
                             IssuePrompt(toolset, PromptConfig(tool_protocol="native")))
    res = pfm.run("pick(Apple)")
    assert res.status == "ok" and [c.name for c in res.tool_calls] == ["dist_to_target"]
    assert "function-calling" in server.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize("default, reason", [
    ({"status": 429, "retry_after": 0.1}, "HTTP 429"),
    ({"status": 500}, "HTTP 500"),
    ({"malformed": True}, "garbage answer"),
    ({"hang": True}, "time limit of 1.5 s"),
    ({"garbage": True}, "no final response after 4 LLM turns"),
])
def test_agent_ends_with_error_naming_the_cause_within_the_deadline(server, default, reason):
    server.default = default
    t0 = time.monotonic()
    res = agent_for(server, time_limit_s=1.5).run("pick(Apple)")
    assert time.monotonic() - t0 < 1.5 + 0.6
    assert res.status == "error" and reason in res.error, res.error


def test_agent_with_unreachable_llm():
    llm = make_llm("openai", base_url=f"http://127.0.0.1:{_closed_port()}/v1", backoff_s=0.05)
    res = ProgramFlowManager(llm, world_tools(kitchen_world()), time_limit_s=2.0).run("pick(Apple)")
    assert res.status == "error" and "unreachable" in res.error


def test_raider_llm_environment_settings_are_honoured(server, monkeypatch):
    monkeypatch.setenv("RAIDER_LLM_BASE_URL", server.url)
    monkeypatch.setenv("RAIDER_LLM_MODEL", "env-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = make_llm("openai")                       # no key needed for a local server
    assert llm.model == "env-model" and llm.base_url == server.url.rstrip("/")
    server.push({"content": "hi"})
    assert complete(llm).text == "hi"
    assert server.requests[-1]["model"] == "env-model"
    assert make_llm("openai", model="explicit").model == "explicit"   # an explicit setting wins


def test_a_missing_key_is_one_line_naming_the_variable(monkeypatch):
    for var in ("RAIDER_LLM_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError) as e:
        make_llm("openai")
    assert "OPENAI_API_KEY" in str(e.value) and "\n" not in str(e.value)
