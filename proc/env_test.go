package proc

import (
	"slices"
	"testing"
)

func TestEnvDropsSecrets(t *testing.T) {
	base := []string{"PATH=/bin", "OPENAI_API_KEY=sk-1", "DEEPSEEK_API_KEY=x", "ZQAGENT_TOKEN=t", "MY_SERVICE_API_TOKEN=y", "HOME=/h", "ZQAGENT_DATA=d"}
	got := Env(base, "GITHUB_API_KEY=mine")
	want := []string{"PATH=/bin", "HOME=/h", "ZQAGENT_DATA=d", "GITHUB_API_KEY=mine"}
	if !slices.Equal(got, want) {
		t.Fatalf("Env = %v, want %v", got, want)
	}
}
