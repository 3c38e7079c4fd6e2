// Package models is the model capability table: context window, maximum
// output, reasoning and vision support for the common OpenAI, DeepSeek,
// Qwen, Kimi (Moonshot), GLM and Llama families. Unknown models get the
// seed's fallback of a 128K window. The table is data only: no network.
//
// Concurrency: read-only after init; safe for concurrent use.
package models

import (
	"os"
	"strconv"
	"strings"
)

// FallbackContextWindow is the seed's window for unknown models.
const FallbackContextWindow = 128_000

// Capabilities of a model.
type Capabilities struct {
	Family        string `json:"family"`
	ContextWindow int    `json:"contextWindow"`
	MaxOutput     int    `json:"maxOutput"`
	Reasoning     bool   `json:"reasoning"`
	Vision        bool   `json:"vision"`
	// Known is false when the model matched no entry (fallback values).
	Known bool `json:"known"`
	// Tokenizer names the BPE encoding that counts this model's tokens
	// exactly ("o200k_base"), or "" when only a calibrated estimate is
	// possible. The legacy cl100k models (gpt-4, gpt-3.5) are estimated
	// from o200k: their vocabulary would add 2.5 MB to the binary.
	Tokenizer string `json:"tokenizer,omitempty"`
}

// entry matches model ids by prefix after normalisation (lower case, vendor
// prefix like "openai/" or "deepseek-ai/" removed). Longer prefixes are
// listed before shorter ones of the same family.
type entry struct {
	prefix string
	caps   Capabilities
}

func c(family string, window, out int, reasoning, vision bool, tok string) Capabilities {
	return Capabilities{Family: family, ContextWindow: window, MaxOutput: out, Reasoning: reasoning, Vision: vision, Known: true, Tokenizer: tok}
}

var table = []entry{
	// OpenAI
	{"gpt-5", c("openai", 400_000, 128_000, true, true, "o200k_base")},
	{"gpt-4.1", c("openai", 1_047_576, 32_768, false, true, "o200k_base")},
	{"gpt-4o", c("openai", 128_000, 16_384, false, true, "o200k_base")},
	{"chatgpt-4o", c("openai", 128_000, 16_384, false, true, "o200k_base")},
	{"gpt-4-turbo", c("openai-cl100k", 128_000, 4_096, false, true, "")},
	{"gpt-4-32k", c("openai-cl100k", 32_768, 4_096, false, false, "")},
	{"gpt-4", c("openai-cl100k", 8_192, 4_096, false, false, "")},
	{"gpt-3.5-turbo", c("openai-cl100k", 16_385, 4_096, false, false, "")},
	{"gpt-oss", c("openai", 131_072, 131_072, true, false, "o200k_base")},
	{"o1-mini", c("openai", 128_000, 65_536, true, false, "o200k_base")},
	{"o1", c("openai", 200_000, 100_000, true, true, "o200k_base")},
	{"o3-mini", c("openai", 200_000, 100_000, true, false, "o200k_base")},
	{"o3", c("openai", 200_000, 100_000, true, true, "o200k_base")},
	{"o4-mini", c("openai", 200_000, 100_000, true, true, "o200k_base")},
	// DeepSeek
	{"deepseek-reasoner", c("deepseek", 128_000, 64_000, true, false, "")},
	{"deepseek-r1", c("deepseek", 128_000, 32_768, true, false, "")},
	{"deepseek-chat", c("deepseek", 128_000, 8_192, false, false, "")},
	{"deepseek-v3", c("deepseek", 128_000, 8_192, false, false, "")},
	{"deepseek-coder", c("deepseek", 128_000, 8_192, false, false, "")},
	{"deepseek", c("deepseek", 128_000, 8_192, false, false, "")},
	// Qwen
	{"qwen-turbo", c("qwen", 1_000_000, 8_192, false, false, "")},
	{"qwen-long", c("qwen", 10_000_000, 8_192, false, false, "")},
	{"qwen-max", c("qwen", 32_768, 8_192, false, false, "")},
	{"qwen-plus", c("qwen", 131_072, 8_192, true, false, "")},
	{"qwen-vl", c("qwen", 131_072, 8_192, false, true, "")},
	{"qwen3-coder", c("qwen", 262_144, 65_536, false, false, "")},
	{"qwen3", c("qwen", 131_072, 32_768, true, false, "")},
	{"qwq", c("qwen", 131_072, 32_768, true, false, "")},
	{"qwen2.5-vl", c("qwen", 131_072, 8_192, false, true, "")},
	{"qwen2.5", c("qwen", 131_072, 8_192, false, false, "")},
	{"qwen", c("qwen", 32_768, 8_192, false, false, "")},
	// Kimi / Moonshot
	{"kimi-k2", c("kimi", 262_144, 16_384, false, false, "")},
	{"kimi-latest", c("kimi", 131_072, 8_192, false, true, "")},
	{"kimi-thinking", c("kimi", 131_072, 32_768, true, true, "")},
	{"kimi", c("kimi", 131_072, 8_192, false, false, "")},
	{"moonshot-v1-8k", c("kimi", 8_192, 4_096, false, false, "")},
	{"moonshot-v1-32k", c("kimi", 32_768, 4_096, false, false, "")},
	{"moonshot-v1-128k", c("kimi", 131_072, 4_096, false, false, "")},
	{"moonshot", c("kimi", 131_072, 4_096, false, false, "")},
	// GLM (Zhipu)
	{"glm-4.5v", c("glm", 65_536, 16_384, true, true, "")},
	{"glm-4.5", c("glm", 131_072, 98_304, true, false, "")},
	{"glm-4.6", c("glm", 200_000, 128_000, true, false, "")},
	{"glm-4v", c("glm", 8_192, 1_024, false, true, "")},
	{"glm-4-long", c("glm", 1_000_000, 4_096, false, false, "")},
	{"glm-z1", c("glm", 32_768, 32_768, true, false, "")},
	{"glm-4", c("glm", 128_000, 4_096, false, false, "")},
	{"glm", c("glm", 128_000, 4_096, false, false, "")},
	// Llama
	{"llama-4-scout", c("llama", 10_000_000, 16_384, false, true, "")},
	{"llama-4-maverick", c("llama", 1_000_000, 16_384, false, true, "")},
	{"llama-4", c("llama", 1_000_000, 16_384, false, true, "")},
	{"llama-3.3", c("llama", 131_072, 8_192, false, false, "")},
	{"llama-3.2", c("llama", 131_072, 8_192, false, true, "")},
	{"llama-3.1", c("llama", 131_072, 8_192, false, false, "")},
	{"llama3.1", c("llama", 131_072, 8_192, false, false, "")},
	{"llama3.2", c("llama", 131_072, 8_192, false, false, "")},
	{"llama3.3", c("llama", 131_072, 8_192, false, false, "")},
	{"llama-3", c("llama", 8_192, 4_096, false, false, "")},
	{"llama3", c("llama", 8_192, 4_096, false, false, "")},
}

// Normalize lower-cases a model id and drops a vendor prefix
// ("openai/gpt-4o" → "gpt-4o", "meta-llama/Llama-3.3-70B" → "llama-3.3-70b").
func Normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "meta-")
	return m
}

// Lookup returns the capabilities of a model id.
func Lookup(model string) Capabilities {
	m := Normalize(model)
	best := -1
	for i, e := range table {
		if strings.HasPrefix(m, e.prefix) && (best < 0 || len(e.prefix) > len(table[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return Capabilities{Family: "unknown", ContextWindow: FallbackContextWindow, MaxOutput: 4_096}
	}
	return table[best].caps
}

// ContextWindow resolves a model's window: an explicit override wins, then
// the CONTEXT_WINDOW environment variable, then the table (128K fallback).
func ContextWindow(model string, override int) int {
	if override > 0 {
		return override
	}
	if v, err := strconv.Atoi(os.Getenv("CONTEXT_WINDOW")); err == nil && v > 0 {
		return v
	}
	return Lookup(model).ContextWindow
}
