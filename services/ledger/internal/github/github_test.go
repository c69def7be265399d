package github_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func requireKind(t *testing.T, err error, want fault.Kind) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, fault.KindOf(err), "error %v", err)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := fixture(t, "push-with-new-branch.payload.json")
	const secret = "It's a Secret to Everybody"
	good := github.Sign(secret, body)
	require.Regexp(t, `^sha256=[0-9a-f]{64}$`, good)

	withSecret := github.NewVerifier(secret, false)
	require.True(t, withSecret.Required())
	require.False(t, withSecret.AcceptsUnsigned())
	require.NoError(t, withSecret.Verify(body, good))
	require.NoError(t, withSecret.Verify(body, "sha256="+strings.ToUpper(strings.TrimPrefix(good, "sha256="))), "hex case does not matter")

	tampered := append([]byte{}, body...)
	tampered[len(tampered)-2] ^= 1
	for name, tc := range map[string]struct {
		body   []byte
		header string
	}{
		"missing":                  {body, ""},
		"wrong secret":             {body, github.Sign("other", body)},
		"body changed":             {tampered, good},
		"sha1 scheme":              {body, "sha1=" + strings.Repeat("a", 40)},
		"no prefix":                {body, strings.TrimPrefix(good, "sha256=")},
		"short":                    {body, good[:len(good)-2]},
		"long":                     {body, good + "00"},
		"not hex":                  {body, "sha256=" + strings.Repeat("z", 64)},
		"prefix in another case":   {body, "SHA256=" + strings.TrimPrefix(good, "sha256=")},
		"whitespace around":        {body, " " + good},
		"signature of empty body":  {body, github.Sign(secret, nil)},
		"right secret, empty body": {nil, good},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireKind(t, withSecret.Verify(tc.body, tc.header), fault.Unauthenticated)
			requireKind(t, github.NewVerifier(secret, true).Verify(tc.body, tc.header), fault.Unauthenticated)
		})
	}

	t.Run("a secret wins over allowing unsigned deliveries", func(t *testing.T) {
		t.Parallel()
		both := github.NewVerifier(secret, true)
		require.False(t, both.AcceptsUnsigned())
		require.NoError(t, both.Verify(body, good))
		requireKind(t, both.Verify(body, ""), fault.Unauthenticated)
	})

	t.Run("without a secret every delivery is refused", func(t *testing.T) {
		t.Parallel()
		none := github.NewVerifier("", false)
		require.False(t, none.Required())
		require.False(t, none.AcceptsUnsigned())
		for _, header := range []string{"", good} {
			err := none.Verify(body, header)
			requireKind(t, err, fault.Unauthenticated)
			require.Contains(t, err.Error(), "FOUNDRY_GITHUB_WEBHOOK_SECRET", "header %q", header)
			require.Contains(t, err.Error(), "FOUNDRY_GITHUB_ALLOW_UNSIGNED=true", "header %q", header)
		}
	})

	t.Run("without a secret, allowed: unsigned deliveries pass, signed ones do not", func(t *testing.T) {
		t.Parallel()
		open := github.NewVerifier("", true)
		require.True(t, open.AcceptsUnsigned())
		require.NoError(t, open.Verify(body, ""), "unsigned deliveries pass")
		requireKind(t, open.Verify(body, good), fault.Unauthenticated)
	})
}

func TestDecodeRealPush(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"push-with-new-branch.payload.json", "push-with-no-username-committer.payload.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := github.Decode(fixture(t, name))
			require.NoError(t, err)
			require.False(t, p.Shaped)
			require.Equal(t, "Codertocat", p.Login)
			require.Equal(t, "github:codertocat", p.ContributorID())
			require.Equal(t, "Codertocat/Hello-World", p.Repository)
			require.Equal(t, "codertocat/hello-world", p.RepositoryKey())
			require.Equal(t, "6113728f27ae82c7b1a177c8d03f9e96e0adf246", p.CommitHash)
			require.Equal(t, "refs/heads/master", p.Ref)
			require.Equal(t, int64(1), p.Files)
			require.Equal(t, 1, p.Commits)
			require.Equal(t, 0.25, p.EstimatedCost().Float64(), "0.10 + 0.15 × 1 file")
			require.Equal(t, map[string]any{
				"has_tests": false, "has_docs": true, "complexity": "low", "files_changed": 1.0, "commits": 1.0,
			}, p.Metadata)
			c, err := attribution.Score(p.Metadata)
			require.NoError(t, err)
			require.Equal(t, 0.8, c.Float64(), "README.md is docs, one file is low complexity")
		})
	}
}

func TestDecodeIgnoredPushes(t *testing.T) {
	t.Parallel()
	_, err := github.Decode(fixture(t, "push-payload.json"))
	ig, ok := github.IsIgnored(err)
	require.True(t, ok, "a tag deletion records nothing: %v", err)
	require.Contains(t, ig.Detail, "deletion of refs/tags/simple-tag")

	// The same commit pushed again (to another branch) is not distinct.
	var pl map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "push-with-new-branch.payload.json"), &pl))
	pl["commits"].([]any)[0].(map[string]any)["distinct"] = false
	b, err := json.Marshal(pl)
	require.NoError(t, err)
	_, err = github.Decode(b)
	ig, ok = github.IsIgnored(err)
	require.True(t, ok, "got %v", err)
	require.Equal(t, "push with no new commits: nothing recorded", ig.Detail)
}

func TestDecodeCountsDistinctFilesOfNewCommits(t *testing.T) {
	t.Parallel()
	body := `{"ref":"refs/heads/main","repository":{"full_name":"acme/app"},"pusher":{"name":"ada"},
		"commits":[
			{"id":"aaaa","distinct":true,"added":["pkg/a.go","pkg/a_test.go"],"modified":["README.md"]},
			{"id":"bbbb","modified":["pkg/a.go"],"removed":["old.txt"]},
			{"id":"cccc","distinct":false,"added":["x/1","x/2","x/3","x/4","x/5"]}
		],
		"head_commit":{"id":"bbbb","author":{"username":"someone-else"}}}`
	p, err := github.Decode([]byte(body))
	require.NoError(t, err)
	require.Equal(t, "ada", p.Login, "the pusher wins over the commit author")
	require.Equal(t, int64(4), p.Files, "a.go, a_test.go, README.md, old.txt")
	require.Equal(t, 2, p.Commits)
	require.Equal(t, "bbbb", p.CommitHash)
	require.Equal(t, true, p.Metadata["has_tests"])
	require.Equal(t, true, p.Metadata["has_docs"])
	require.Equal(t, "medium", p.Metadata["complexity"])
	require.Equal(t, 0.70, p.EstimatedCost().Float64())
}

func TestDecodeLoginFallbacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, identity, want string
	}{
		{"pusher", `"pusher":{"name":"Ada"}`, "github:ada"},
		{"author username when the pusher name is not a login", `"pusher":{"name":"Ada Lovelace"},"head_commit":{"id":"abcd","author":{"username":"ada-l"}}`, "github:ada-l"},
		{"sender last", `"sender":{"login":"dependabot[bot]"}`, "github:dependabot[bot]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := `{"repository":{"full_name":"a/b"},"commits":[{"id":"abcd","added":["f"]}],` + tt.identity + `}`
			p, err := github.Decode([]byte(body))
			require.NoError(t, err)
			require.Equal(t, tt.want, p.ContributorID())
		})
	}
}

func TestDecodeShaped(t *testing.T) {
	t.Parallel()
	p, err := github.Decode([]byte(`{"contributor_email":"Ada@Example.com","repository":"acme/App","commit_hash":"abc123",
		"cost_amount":2.5,"metadata":{"has_tests":true}}`))
	require.NoError(t, err)
	require.True(t, p.Shaped)
	require.Equal(t, "email:ada@example.com", p.ContributorID())
	require.Equal(t, "acme/app", p.RepositoryKey())
	require.Equal(t, money.Micros(2_500_000), p.EstimatedCost())
	require.Equal(t, map[string]any{"has_tests": true}, p.Metadata)
	require.Equal(t, map[string]any{
		"has_tests": true,
		"github":    map[string]any{"delivery_id": "d-1", "repository": "acme/App", "commit_hash": "abc123", "email": "Ada@Example.com"},
	}, p.RecordedMetadata("d-1"))

	estimated, err := github.Decode([]byte(`{"contributor_email":"a@b.c","repository":"a/b","metadata":{"files_changed":2,"lines_changed":100}}`))
	require.NoError(t, err)
	require.Equal(t, 0.60, estimated.EstimatedCost().Float64(), "0.10 + 0.15 × 2 + 0.002 × 100")

	bare, err := github.Decode([]byte(`{"contributor_email":"a@b.c","repository":"a/b"}`))
	require.NoError(t, err)
	require.Equal(t, 0.10, bare.EstimatedCost().Float64())
	require.Equal(t, map[string]any{}, bare.Metadata)
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"not JSON":                     `{"repository":`,
		"array":                        `[1]`,
		"null":                         `null`,
		"empty":                        ``,
		"no repository":                `{"pusher":{"name":"a"},"commits":[{"id":"abcd"}]}`,
		"repository without full name": `{"repository":{},"pusher":{"name":"a"},"commits":[{"id":"abcd"}]}`,
		"bad full name":                `{"repository":{"full_name":"no-slash"},"pusher":{"name":"a"}}`,
		"no identity":                  `{"repository":{"full_name":"a/b"},"commits":[{"id":"abcd"}]}`,
		"wrong type in GitHub payload": `{"repository":{"full_name":"a/b"},"commits":"many"}`,
		"shaped: unknown field":        `{"contributor_email":"a@b.c","repository":"a/b","admin":true}`,
		"shaped: bad email":            `{"contributor_email":"nobody","repository":"a/b"}`,
		"shaped: no email":             `{"repository":"a/b"}`,
		"shaped: negative cost":        `{"contributor_email":"a@b.c","repository":"a/b","cost_amount":-1}`,
		"shaped: too precise cost":     `{"contributor_email":"a@b.c","repository":"a/b","cost_amount":0.0000001}`,
		"shaped: bad commit hash":      `{"contributor_email":"a@b.c","repository":"a/b","commit_hash":"xyz"}`,
		"shaped: fractional files":     `{"contributor_email":"a@b.c","repository":"a/b","metadata":{"files_changed":1.5}}`,
		"shaped: negative lines":       `{"contributor_email":"a@b.c","repository":"a/b","metadata":{"lines_changed":-1}}`,
		"shaped: trailing data":        `{"contributor_email":"a@b.c","repository":"a/b"} {}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := github.Decode([]byte(body))
			requireKind(t, err, fault.Invalid)
		})
	}
}

func TestValidateDeliveryID(t *testing.T) {
	t.Parallel()
	require.NoError(t, github.ValidateDeliveryID("72d3162e-cc78-11e3-81ab-4c9367dc0958"))
	require.NoError(t, github.ValidateDeliveryID(""), "the header is optional")
	for _, bad := range []string{strings.Repeat("d", github.MaxDeliveryIDLen+1), "line\nbreak"} {
		requireKind(t, github.ValidateDeliveryID(bad), fault.Invalid)
	}
}

func TestCheckRedeliveryKey(t *testing.T) {
	t.Parallel()
	shaped := func(hash string) github.Push {
		p, err := github.Decode([]byte(`{"contributor_email":"a@b.c","repository":"Acme/Engine","commit_hash":"` + hash + `","cost_amount":1}`))
		require.NoError(t, err)
		return p
	}
	noHash, err := github.Decode([]byte(`{"contributor_email":"a@b.c","repository":"acme/engine","cost_amount":1}`))
	require.NoError(t, err)
	tests := []struct {
		name       string
		push       github.Push
		deliveryID string
		wantField  string
	}{
		{"a delivery id is enough", noHash, "72d3162e", ""},
		{"a commit hash is enough", shaped("ABC123"), "", ""},
		{"both", shaped("abc123"), "72d3162e", ""},
		{"neither", noHash, "", "commit_hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.push.CheckRedeliveryKey(tt.deliveryID)
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			requireKind(t, err, fault.Invalid)
			fe, _ := fault.As(err)
			require.Equal(t, tt.wantField, fe.Fields[0].Field, "got field %q, want %q", fe.Fields[0].Field, tt.wantField)
		})
	}
	require.Equal(t, "abc123", shaped("ABC123").CommitKey(), "hex case does not matter")
	require.Equal(t, "acme/engine", shaped("abc123").RepositoryKey())
	require.Equal(t, map[string]any{"repository": "Acme/Engine", "commit_hash": "ABC123", "email": "a@b.c"},
		shaped("ABC123").RecordedMetadata("")[github.KeyGitHub], "no delivery_id without the header")
}

func TestPathClassifiers(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"pkg/a_test.go", "tests/x.py", "src/__tests__/a.js", "test_util.py", "a.test.ts", "b.spec.js", "src/FooTest.java", "spec/models/user_spec.rb"} {
		require.True(t, github.IsTestPath(p), p)
	}
	for _, p := range []string{"main.go", "contest.go", "latest/x.go", "README.md"} {
		require.False(t, github.IsTestPath(p), p)
	}
	for _, p := range []string{"README.md", "docs/api.yaml", "CHANGELOG", "guide.rst", "Doc/intro.html"} {
		require.True(t, github.IsDocPath(p), p)
	}
	for _, p := range []string{"main.go", "docker/Dockerfile", "markdown.go"} {
		require.False(t, github.IsDocPath(p), p)
	}
}
