package prompt_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/prompt"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestRender(t *testing.T) {
	t.Parallel()
	got := prompt.Render(prompt.Default, prompt.Vars{TaskType: "impl", Direction: "Move the kettle on", IdeaID: "kettle",
		IdeaName: "Solar kettle", IdeaDesc: "Boils water with {{direction}} sunlight.", Stage: "specced",
		Previous: []prompt.Output{{TaskType: "spec", Output: "  The spec.\n"}}})
	require.Contains(t, got, "the impl task of an idea")
	require.Contains(t, got, "Task: Move the kettle on\n")
	require.Contains(t, got, "Implement what the specification asks")
	require.Contains(t, got, `<idea id="kettle" stage="specced">`)
	require.Contains(t, got, "description: Boils water with {{direction}} sunlight.", "a value is not read for placeholders")
	require.Contains(t, got, "<previous>\n[spec]\nThe spec.\n</previous>")
	withArtifact := prompt.Render("{{previous}}", prompt.Vars{Previous: []prompt.Output{
		{TaskType: "spec", Output: "The spec."}, {TaskType: "impl", Output: "Done.", Artifact: " https://example.com/pull/7\n"}}})
	require.Equal(t, "[spec]\nThe spec.\n\n[impl]\nDone.\nartifact:\nhttps://example.com/pull/7", withArtifact,
		"an earlier stage's artifact follows its output")

	bare := prompt.Render("{{task_type}}: {{idea.name}} / {{previous}} / {{unknown}}", prompt.Vars{TaskType: "spec"})
	require.Equal(t, "spec: (none) / (none) / {{unknown}}", bare)
	for _, p := range prompt.Placeholders {
		require.Contains(t, prompt.Default, "{{"+p+"}}", "the default uses %s", p)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, prompt.Validate("terse-v2", "impl", "Do {{direction}}", 0))
	require.NoError(t, prompt.Validate("a", "review", "x", 7))
	for name, c := range map[string]struct {
		name, typ, text string
		version         int
		field           string
	}{
		"no name":      {"", "impl", "x", 0, "name"},
		"capitals":     {"Terse", "impl", "x", 0, "name"},
		"space":        {"a b", "impl", "x", 0, "name"},
		"long name":    {strings.Repeat("a", 101), "impl", "x", 0, "name"},
		"unknown type": {"a", "dance", "x", 0, "task_type"},
		"blank text":   {"a", "impl", " \n", 0, "text"},
		"long text":    {"a", "impl", strings.Repeat("é", 20001), 0, "text"},
		"negative":     {"a", "impl", "x", -1, "version"},
	} {
		err := prompt.Validate(c.name, c.typ, c.text, c.version)
		fe, ok := fault.As(err)
		require.True(t, ok, name)
		require.Equal(t, fault.Invalid, fe.Kind, name)
		require.Equal(t, c.field, fe.Fields[0].Field, name)
	}
}
