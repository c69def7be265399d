package usage_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/usage"
)

// FuzzFamilyOf checks provider names fold into a family exactly when,
// trimmed and lowercased, they are a family name or alias, alone or
// followed by "-" or "_"; and that the stored form of a name is stable.
func FuzzFamilyOf(f *testing.F) {
	for _, s := range []string{"openai", "OpenAI-Codex", "claude_code", " anthropic ", "codexx", "claudeai", "chatgpt-", "", "\u212alaude", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, provider string) {
		family, ok := usage.FamilyOf(provider)
		p := usage.NormalizeProvider(provider)
		require.Equal(t, p, usage.NormalizeProvider(p), "the stored form is stable")
		want := ""
		for prefix, fam := range map[string]string{"openai": usage.OpenAI, "codex": usage.OpenAI, "chatgpt": usage.OpenAI,
			"claude": usage.Claude, "anthropic": usage.Claude} {
			if rest, found := strings.CutPrefix(p, prefix); found && (rest == "" || rest[0] == '-' || rest[0] == '_') {
				want = fam
			}
		}
		require.Equal(t, want != "", ok, "provider %q", provider)
		require.Equal(t, want, family)
		if ok {
			again, _ := usage.FamilyOf(p)
			require.Equal(t, family, again, "the stored form folds the same way")
		}
	})
}
