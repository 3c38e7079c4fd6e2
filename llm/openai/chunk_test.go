package openai

import (
	"encoding/json"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

// chunkCorpus are stream chunks as providers send them: OpenAI's, with
// tool calls split over chunks, DeepSeek's reasoning, usage-only chunks,
// nulls where fields are absent, escapes, invalid UTF-8, unknown fields,
// duplicate and differently cased names (which encoding/json accepts).
var chunkCorpus = []string{
	chatChunk(`{"role":"assistant","content":""}`, ""),
	chatChunk(`{"content":"Hello, \"world\" \u00e9\ud83d\ude00 <b>&amp;</b>\n"}`, ""),
	chatChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}`, ""),
	chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, ""),
	chatChunk(`{"tool_calls":[{"function":{"name":"x","arguments":"{}"}}]}`, ""),
	chatChunk(`{"reasoning_content":"think","content":null}`, ""),
	chatChunk(`{}`, "stop"),
	chatChunk(`{}`, "tool_calls"),
	chatUsageChunk,
	`{"choices":[{"index":1,"delta":{"content":"second choice"}},{"index":0,"delta":{"content":"first"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null}`,
	`{"choices":null}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff\xfe utf8\"}}]}",
	`{"choices":[{"index":0,"delta":{"content":"one","content":"two"}}]}`,
	`{"Choices":[{"INDEX":0,"Delta":{"Content":"cased"}}]}`,
	`{"id":"x","extra":{"nested":[1,2,{"a":null}]},"choices":[{"index":0,"delta":{"content":"x","refusal":"no","function_call":{"name":"n"}},"logprobs":{"content":[]},"content_filter_results":{"hate":{"filtered":false}}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":null}}`,
}

// sdkChunk is the same chunk decoded as the SDK decodes it (encoding/json
// into its ChatCompletionStreamResponse), reduced to what the provider reads.
func sdkChunk(raw []byte) (chatStreamChunk, error) {
	var r goopenai.ChatCompletionStreamResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return chatStreamChunk{}, err
	}
	var c chatStreamChunk
	if r.Usage != nil {
		c.Usage = chatUsageOf(*r.Usage)
	}
	if r.Choices != nil {
		c.Choices = make([]chatStreamChoice, 0, len(r.Choices))
	}
	for _, ch := range r.Choices {
		var o chatStreamChoice
		o.Index = ch.Index
		o.Delta.Content = ch.Delta.Content
		o.Delta.ReasoningContent = ch.Delta.ReasoningContent
		o.Delta.ToolCalls = ch.Delta.ToolCalls
		o.FinishReason = ch.FinishReason
		c.Choices = append(c.Choices, o)
	}
	return c, nil
}

func TestDecodeChunkIsTheSDKDecoding(t *testing.T) {
	for _, raw := range chunkCorpus {
		want, err := sdkChunk([]byte(raw))
		require.NoError(t, err, raw)
		var got chatStreamChunk
		require.NoError(t, decodeChunk([]byte(raw), &got), raw)
		require.Equal(t, want, got, raw)
	}
}

func TestDecodeChunkRejectsWhatTheSDKRejects(t *testing.T) {
	for _, raw := range []string{
		``, `{`, `[]`, `"x"`, `{"choices":[{"index":"0"}]}`, `{"choices":{}}`,
		`{"choices":[{"index":0,"delta":{"content":5}}]}`, `{"usage":{"prompt_tokens":1.5}}`,
		`{"choices":[]} trailing`,
	} {
		_, sdkErr := sdkChunk([]byte(raw))
		require.Error(t, sdkErr, raw)
		var got chatStreamChunk
		require.Error(t, decodeChunk([]byte(raw), &got), raw)
	}
}

// FuzzDecodeChunk: decodeChunk reads any input as encoding/json reads it
// into the same struct: both accept it and read the same, or both reject
// it. (The SDK's own struct has fields the provider never reads, whose
// wrong types it rejects; decodeChunk skips them, as it does unknown
// fields. TestDecodeChunkIsTheSDKDecoding pins the fields it reads.)
func FuzzDecodeChunk(f *testing.F) {
	for _, raw := range chunkCorpus {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want chatStreamChunk
		v1Err := json.Unmarshal(raw, &want)
		var got chatStreamChunk
		err := decodeChunk(raw, &got)
		if (v1Err == nil) != (err == nil) {
			t.Fatalf("encoding/json error %v, decodeChunk error %v, for %q", v1Err, err, raw)
		}
		if err == nil {
			require.Equal(t, want, got, "%q", raw)
		}
	})
}
