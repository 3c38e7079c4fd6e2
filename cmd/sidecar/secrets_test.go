package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const testToken = "tok-0123456789abcdef"

func TestParseSecretsLine(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       secretsLine
		err        string // a part of the error; "" means ok
	}{
		{"token and keys", `{"token":"` + testToken + `","keys":{"openai":"sk-a","my-local":"sk-b"}}`,
			secretsLine{Token: testToken, Keys: map[string]string{"openai": "sk-a", "my-local": "sk-b"}}, ""},
		{"keys only", `{"keys":{"openai":"sk-a"}}`, secretsLine{Keys: map[string]string{"openai": "sk-a"}}, ""},
		{"token only", ` {"token":"` + testToken + `"} `, secretsLine{Token: testToken}, ""},
		{"empty object", `{}`, secretsLine{}, ""},
		{"empty keys", `{"keys":{}}`, secretsLine{}, ""},
		{"case variant field", `{"Token":"` + testToken + `"}`, secretsLine{}, `unknown field "Token"`},
		{"unknown field", `{"token":"` + testToken + `","extra":1}`, secretsLine{}, `unknown field "extra"`},
		{"duplicate token", `{"token":"` + testToken + `","token":"` + testToken + `x"}`, secretsLine{}, `duplicate field "token"`},
		{"duplicate provider", `{"keys":{"openai":"sk-a","openai":"sk-b"}}`, secretsLine{}, `duplicate field "openai"`},
		{"duplicate keys", `{"keys":{},"keys":{}}`, secretsLine{}, `duplicate field "keys"`},
		{"token not a string", `{"token":12345678901234567890}`, secretsLine{}, "token must be a string"},
		{"token null", `{"token":null}`, secretsLine{}, "token must be a string"},
		{"short token", `{"token":"abc"}`, secretsLine{}, "16 to 512"},
		{"token with a space", `{"token":"abc def 0123456789"}`, secretsLine{}, "character 4"},
		{"keys not an object", `{"keys":["sk-a"]}`, secretsLine{}, "keys: not a JSON object"},
		{"keys null", `{"keys":null}`, secretsLine{}, "keys: not a JSON object"},
		{"key not a string", `{"keys":{"openai":{"k":"v"}}}`, secretsLine{}, "keys.openai must be a string"},
		{"empty key", `{"keys":{"openai":""}}`, secretsLine{}, "invalid API key: empty"},
		{"key with newline", `{"keys":{"openai":"sk-a\nb"}}`, secretsLine{}, "control character"},
		{"bad provider", `{"keys":{" openai":"sk-a"}}`, secretsLine{}, "invalid provider name"},
		{"array", `["sk-secret-value"]`, secretsLine{}, "not a JSON object"},
		{"trailing data", `{}{}`, secretsLine{}, "data after"},
		{"truncated", `{"keys":{"openai":"sk-a"`, secretsLine{}, "ends early"},
		{"syntax error", `{"keys":{"openai":sk-secret}}`, secretsLine{}, "not valid JSON (at byte"},
		{"empty line", ``, secretsLine{}, "not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseSecretsLine([]byte(c.line))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				require.NotContains(t, err.Error(), "sk-", "an error never quotes a key")
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestReadSecretsLineLeavesTheRest(t *testing.T) {
	r := strings.NewReader(`{"keys":{"openai":"sk-a"}}` + "\nafter")
	got, err := readSecretsLine(r, time.Second)
	require.NoError(t, err)
	require.Equal(t, "sk-a", got.Keys["openai"])
	rest, _ := io.ReadAll(r)
	require.Equal(t, "after", string(rest), "nothing after the line is consumed")

	_, err = readSecretsLine(strings.NewReader(`{}`), time.Second)
	require.ErrorContains(t, err, "stdin closed before the secrets line")
	_, err = readSecretsLine(strings.NewReader(strings.Repeat("x", secretsLineMax+2)), time.Second)
	require.ErrorContains(t, err, "longer than")
	pr, pw := io.Pipe()
	defer pw.Close()
	_, err = readSecretsLine(pr, 50*time.Millisecond)
	require.ErrorContains(t, err, "no secrets line on stdin within")
	pw.Close() // the abandoned reader ends
}

func TestSecretEnv(t *testing.T) {
	got := secretEnv([]string{"PATH=/bin", "OPENAI_API_KEY=sk-1", "MY_LOCAL_API_KEY=sk-2", "ZQAGENT_TOKEN=t",
		"EMPTY_API_KEY=", "ZQAGENT_SCRIPT=/s", "HOME=/h", "=weird"})
	require.Equal(t, map[string]string{"OPENAI_API_KEY": "sk-1", "MY_LOCAL_API_KEY": "sk-2", "ZQAGENT_TOKEN": "t"}, got)
}

// FuzzParseSecretsLine: any input either fails with an error that quotes
// no value, or decodes to valid secrets that re-encode to an equal line.
func FuzzParseSecretsLine(f *testing.F) {
	for _, s := range []string{
		`{"token":"` + testToken + `","keys":{"openai":"sk-a"}}`, `{}`, `{"keys":{"a":"b","a":"c"}}`,
		`{"Token":"x"}`, `{"keys":{"openai":"sk-\u0000"}}`, `{"token":"` + testToken + `"}x`, `[`, `{"keys":{"ｏpenai":"k"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := parseSecretsLine(line)
		if err != nil {
			var m map[string]any
			if json.Unmarshal(line, &m) == nil {
				if s, ok := m["token"].(string); ok && len(s) >= 8 && strings.Contains(err.Error(), s) {
					t.Fatalf("error %q quotes the token", err)
				}
			}
			return
		}
		if got.Token != "" {
			require.NoError(t, validateToken(got.Token))
		}
		b, err := json.Marshal(got)
		require.NoError(t, err)
		again, err := parseSecretsLine(b)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}
