"""The Hermes/Qwen tool-call parser reads what the Qwen chat template writes."""

from tau_emotion.trainers.tool_calls import parse_tool_calls


def test_one_call_with_thinking_and_end_token():
    text = '<think>\n\n</think>\n\n<tool_call>\n{"name": "find_owner", "arguments": {"name": "Ada Park"}}\n</tool_call><|im_end|>'
    parsed = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("find_owner", {"name": "Ada Park"})]
    assert parsed.errors == []
    assert parsed.content == ""  # the thinking block and the end-of-turn token are not content


def test_several_calls_content_and_string_arguments():
    text = ('Let me check.\n<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call>\n'
            '<tool_call>{"name": "b", "parameters": {"y": [2]}}</tool_call>')
    parsed = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", {"x": 1}), ("b", {"y": [2]})]
    assert parsed.content == "Let me check."


def test_malformed_blocks_are_reported_not_raised():
    text = ('<tool_call>{"name": "a", "arguments": {"x": 1}</tool_call>'
            '<tool_call>{"arguments": {}}</tool_call>'
            '<tool_call>{"name": "c", "arguments": [1]}</tool_call>'
            '<tool_call>{"name": "d", "arguments": {}}')  # cut off by max_new_tokens: still parsed
    parsed = parse_tool_calls(text)
    assert [c.name for c in parsed.tool_calls] == ["d"]
    assert len(parsed.errors) == 3
    assert "not JSON" in parsed.errors[0] and "no tool name" in parsed.errors[1]


def test_plain_text_has_no_calls():
    parsed = parse_tool_calls("What is your user id?")
    assert parsed.tool_calls == [] and parsed.content == "What is your user id?"
