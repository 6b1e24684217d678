package model

import "fmt"

// Describe explains a wire in a few lines for `scv config show`: the
// request it makes, what SCV keeps from the stream and what it drops.
func Describe(wire string) []string {
	switch wire {
	case WireResponses:
		return []string{
			"POST <base_url>/responses, streamed, stateless (store: false): the history is replayed as messages, function_call and function_call_output items.",
			"kept: output_text and refusal parts as the answer (separate message items set off by a blank line; text only in the final item or response is recovered), function calls keyed by output_index and deduplicated by call_id, url_citation links as a Sources: list, the final usage.",
			"dropped: reasoning summaries (streamed to clients as assistant.reasoning, never sent back), hosted tool items SCV does not offer (shell, code interpreter, image generation, …), unknown events.",
		}
	case WireChat:
		return []string{
			"POST <base_url>/chat/completions, streamed with include_usage: the history is replayed as system, user, assistant (tool_calls) and tool messages.",
			"kept: delta.content (a string, or the text parts of an array) and delta.refusal as the answer, tool calls by index (without an index, a new id starts a new call), the last usage.",
			"dropped: reasoning_content, reasoning and thinking parts (streamed to clients as assistant.reasoning, never sent back), choices other than the first, unknown fields; finish_reason \"length\" fails the turn.",
		}
	case WireAnthropic:
		return []string{
			"POST <base_url>/v1/messages with x-api-key and anthropic-version 2023-06-01, streamed; prompt caching marks the system prompt, the tools and the last message; reasoning_effort turns on extended thinking.",
			"kept: text blocks as the answer (adjacent blocks joined as they are, blocks separated by other blocks set off by a blank line), tool_use calls, signed thinking blocks (sent back only during the tool loop of their turn), web search citations as a Sources: list, usage with cache reads and writes.",
			"dropped: thinking text from the answer (streamed to clients as assistant.reasoning), server tools SCV does not offer, unknown events; stop_reason max_tokens fails the turn, a refusal without text fails it, overload errors are retried only before anything streamed.",
		}
	}
	return nil
}

// LimitRules explains how the provider limits apply, with their values.
func LimitRules(l Limits) []string {
	l = withDefaults(l)
	return []string{
		fmt.Sprintf("max_response_bytes (%d) counts the content of one response: answer, reasoning and argument bytes as decoded; the bytes read, framing included, may be %d times that (%d).",
			l.MaxResponseBytes, FramingAllowance, l.MaxResponseBytes*FramingAllowance),
		fmt.Sprintf("max_sse_event_bytes (%d) bounds one event, plus %d times the content already received for final events that repeat it.",
			l.MaxSSEEventBytes, RepeatAllowance),
		fmt.Sprintf("max_assistant_bytes (%d) bounds the answer text, max_tool_arguments_bytes (%d) the arguments of each call, max_tool_calls (%d) the calls of one response.",
			l.MaxAssistantBytes, l.MaxToolArgumentsBytes, l.MaxToolCalls),
	}
}
