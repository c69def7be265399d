package github

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Events the ledger distinguishes (the X-GitHub-Event header).
const (
	EventPush = "push"
	EventPing = "ping"
)

// Prefixes of the contributor ids the webhook creates. A GitHub login and
// an e-mail address live in their own namespaces, apart from registered
// (TOFU) contributors, whose ids are UUIDs: claiming the handle "octocat"
// gives no hold on "github:octocat".
const (
	LoginPrefix = "github:"
	EmailPrefix = "email:"
)

// Limits on what a delivery may name.
const (
	MaxDeliveryIDLen  = 200
	maxRepositoryLen  = 200
	maxLoginLen       = 100
	maxEmailLen       = 254
	maxCommitHashLen  = 64
	minCommitHashLen  = 4
	maxMetadataKeyLen = 100
)

var (
	repositoryPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	// loginPattern accepts GitHub logins and bot names ("dependabot[bot]").
	loginPattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._\[\]-]*$`)
	commitHashPattern = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// Push is a push delivery reduced to what the ledger records: who (a GitHub
// login, or for the shaped body an e-mail address), which repository, and
// how large the change was.
type Push struct {
	// Login is the GitHub login credited (real pushes); Email the address
	// (shaped body). Exactly one is set.
	Login string
	Email string
	// Repository is the full name as sent ("Codertocat/Hello-World").
	Repository string
	CommitHash string
	// Ref is the pushed ref (real pushes only).
	Ref string
	// Files and Lines measure the change: distinct files touched by the
	// push's new commits (GitHub sends no line counts), or what the shaped
	// body's metadata says.
	Files int64
	Lines int64
	// Commits counts the new (distinct) commits of a real push.
	Commits int
	// Cost is the shaped body's explicit cost_amount; nil means estimate.
	Cost *money.Micros
	// Metadata feeds the coherence score and is stored with the
	// contribution: the shaped body's own, or derived from the changed paths.
	Metadata map[string]any
	// Shaped tells the shaped body from a real GitHub payload.
	Shaped bool
}

// ContributorID is the ledger id of the contributor credited: "github:" and
// the lowercased login (GitHub logins are case-insensitive), or "email:" and
// the lowercased address.
func (p Push) ContributorID() string {
	if p.Login != "" {
		return LoginPrefix + strings.ToLower(p.Login)
	}
	return EmailPrefix + strings.ToLower(p.Email)
}

// RepositoryKey is the asset key of the repository: its full name,
// lowercased (GitHub repository names are case-insensitive).
func (p Push) RepositoryKey() string { return strings.ToLower(p.Repository) }

// CommitKey is the commit hash, lowercased, that recognises a redelivery
// of a push sent without X-GitHub-Delivery (with RepositoryKey); "" when the
// push names no commit.
func (p Push) CommitKey() string { return strings.ToLower(p.CommitHash) }

// EstimatedCost is the cost recorded: the explicit one, else the estimate
// from files and lines.
func (p Push) EstimatedCost() money.Micros {
	if p.Cost != nil {
		return *p.Cost
	}
	return attribution.EstimateCost(p.Files, p.Lines)
}

// Ignored is returned by Decode for a well-formed push that records
// nothing; Detail says why.
type Ignored struct{ Detail string }

// Error implements error.
func (e *Ignored) Error() string { return e.Detail }

// IsIgnored reports whether err is an Ignored push and returns it.
func IsIgnored(err error) (*Ignored, bool) {
	var ig *Ignored
	ok := errors.As(err, &ig)
	return ig, ok
}

// Decode reads a push delivery body: a real GitHub push payload, or the
// shaped body {contributor_email, repository, commit_hash, cost_amount,
// metadata}. It tells them apart by the shape of "repository" (an object in
// GitHub's payload, a string in the shaped one) or the presence of
// contributor_email. A malformed body is Invalid; a push with no new commits
// (a branch or tag deletion, a tag or branch created on an existing commit,
// commits already pushed elsewhere) is an *Ignored error.
func Decode(body []byte) (Push, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return Push{}, fault.Validation(fault.Field("body", "must be a JSON object"))
	}
	repo := bytes.TrimSpace(top["repository"])
	_, hasEmail := top["contributor_email"]
	if hasEmail || (len(repo) > 0 && repo[0] == '"') {
		return decodeShaped(body)
	}
	return decodeGitHub(body)
}

// shapedBody is Foundry's own delivery format: strict, like every request
// body of the API.
type shapedBody struct {
	ContributorEmail string         `json:"contributor_email"`
	Repository       string         `json:"repository"`
	CommitHash       string         `json:"commit_hash"`
	CostAmount       *float64       `json:"cost_amount"`
	Metadata         map[string]any `json:"metadata"`
}

// Shaped-body metadata keys giving the size of the change, used to estimate
// the cost when cost_amount is absent.
const (
	KeyFilesChanged = "files_changed"
	KeyLinesChanged = "lines_changed"
)

func decodeShaped(body []byte) (Push, error) {
	var s shapedBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Push{}, fault.Validation(fault.Field("body", "%s", jsonProblem(err)))
	}
	if dec.More() {
		return Push{}, fault.Validation(fault.Field("body", "must hold one JSON object"))
	}
	var errs []fault.FieldError
	if msg := checkEmail(s.ContributorEmail); msg != "" {
		errs = append(errs, fault.Field("contributor_email", "%s", msg))
	}
	if msg := checkRepository(s.Repository); msg != "" {
		errs = append(errs, fault.Field("repository", "%s", msg))
	}
	if s.CommitHash != "" && !validCommitHash(s.CommitHash) {
		errs = append(errs, fault.Field("commit_hash", "must be %d to %d hex digits", minCommitHashLen, maxCommitHashLen))
	}
	p := Push{Email: s.ContributorEmail, Repository: s.Repository, CommitHash: s.CommitHash, Metadata: s.Metadata, Shaped: true}
	if p.Metadata == nil {
		p.Metadata = map[string]any{}
	}
	for k := range p.Metadata {
		if len(k) > maxMetadataKeyLen {
			errs = append(errs, fault.Field("metadata", "keys must be at most %d bytes", maxMetadataKeyLen))
			break
		}
	}
	if s.CostAmount != nil {
		cost, err := attribution.Amount("cost_amount", *s.CostAmount)
		if err != nil {
			fe, _ := fault.As(err)
			errs = append(errs, fe.Fields...)
		}
		p.Cost = &cost
	} else {
		var ok bool
		if p.Files, ok = count(p.Metadata, KeyFilesChanged); !ok {
			errs = append(errs, fault.Field("metadata."+KeyFilesChanged, "must be a non-negative whole number"))
		}
		if p.Lines, ok = count(p.Metadata, KeyLinesChanged); !ok {
			errs = append(errs, fault.Field("metadata."+KeyLinesChanged, "must be a non-negative whole number"))
		}
	}
	if len(errs) > 0 {
		return Push{}, fault.Validation(errs...)
	}
	return p, nil
}

// count reads an optional non-negative whole number from metadata.
func count(meta map[string]any, key string) (int64, bool) {
	v, ok := meta[key]
	if !ok || v == nil {
		return 0, true
	}
	f, isNum := v.(float64)
	if !isNum || f < 0 || f != float64(int64(f)) || f > 1e15 {
		return 0, false
	}
	return int64(f), true
}

// pushPayload is the part of GitHub's push payload the ledger reads; the
// rest (there is a lot) is ignored, as GitHub adds fields over time.
type pushPayload struct {
	Ref        string      `json:"ref"`
	After      string      `json:"after"`
	Deleted    bool        `json:"deleted"`
	Repository *repository `json:"repository"`
	Pusher     *person     `json:"pusher"`
	Sender     *struct {
		Login string `json:"login"`
	} `json:"sender"`
	Commits    []commit `json:"commits"`
	HeadCommit *commit  `json:"head_commit"`
}

type repository struct {
	FullName string `json:"full_name"`
}

type person struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Username string `json:"username"`
}

type commit struct {
	ID       string   `json:"id"`
	Distinct *bool    `json:"distinct"`
	Author   person   `json:"author"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Modified []string `json:"modified"`
}

func decodeGitHub(body []byte) (Push, error) {
	var pl pushPayload
	if err := json.Unmarshal(body, &pl); err != nil {
		return Push{}, fault.Validation(fault.Field("body", "not a GitHub push payload: %s", jsonProblem(err)))
	}
	if pl.Repository == nil {
		return Push{}, fault.Validation(fault.Field("repository", "is required"))
	}
	if msg := checkRepository(pl.Repository.FullName); msg != "" {
		return Push{}, fault.Validation(fault.Field("repository.full_name", "%s", msg))
	}
	login := pusherLogin(pl)
	if login == "" {
		return Push{}, fault.Validation(fault.Field("pusher", "names no GitHub login (pusher.name, head_commit.author.username or sender.login)"))
	}

	// Only commits new to the repository count: GitHub marks a commit
	// already pushed before (to another branch, say) as not distinct, and
	// counting it again would pay for the same work twice.
	files := map[string]struct{}{}
	newCommits := 0
	for _, c := range pl.Commits {
		if c.Distinct != nil && !*c.Distinct {
			continue
		}
		newCommits++
		for _, list := range [][]string{c.Added, c.Removed, c.Modified} {
			for _, f := range list {
				files[f] = struct{}{}
			}
		}
	}
	if newCommits == 0 {
		what := "no new commits"
		switch {
		case pl.Deleted:
			what = "a deletion of " + pl.Ref
		case len(pl.Commits) == 0:
			what = "no commits"
		}
		return Push{}, &Ignored{Detail: fmt.Sprintf("push with %s: nothing recorded", what)}
	}

	hash := pl.After
	if pl.HeadCommit != nil && pl.HeadCommit.ID != "" {
		hash = pl.HeadCommit.ID
	}
	if !validCommitHash(hash) {
		hash = ""
	}
	paths := make([]string, 0, len(files))
	for f := range files {
		paths = append(paths, f)
	}
	slices.Sort(paths)
	p := Push{
		Login: login, Repository: pl.Repository.FullName, CommitHash: hash, Ref: pl.Ref,
		Files: int64(len(paths)), Commits: newCommits,
	}
	p.Metadata = map[string]any{
		attribution.KeyHasTests:   slices.ContainsFunc(paths, IsTestPath),
		attribution.KeyHasDocs:    slices.ContainsFunc(paths, IsDocPath),
		attribution.KeyComplexity: attribution.Complexity(len(paths)),
		KeyFilesChanged:           float64(len(paths)),
		"commits":                 float64(newCommits),
	}
	return p, nil
}

// pusherLogin picks the GitHub login credited with a push: the pusher (the
// account GitHub authenticated for the push), else the head commit's author
// username, else the sender. Commit authors come from the committer's git
// configuration, which anyone can set to anyone's address, so they are only
// a fallback.
func pusherLogin(pl pushPayload) string {
	var candidates []string
	if pl.Pusher != nil {
		candidates = append(candidates, pl.Pusher.Name)
	}
	if pl.HeadCommit != nil {
		candidates = append(candidates, pl.HeadCommit.Author.Username)
	}
	if pl.Sender != nil {
		candidates = append(candidates, pl.Sender.Login)
	}
	for _, c := range candidates {
		if len(c) <= maxLoginLen && loginPattern.MatchString(c) {
			return c
		}
	}
	return ""
}

func checkRepository(s string) string {
	switch {
	case s == "":
		return "is required"
	case len(s) > maxRepositoryLen || !repositoryPattern.MatchString(s):
		return "must be a repository full name, owner/name"
	}
	return ""
}

func checkEmail(s string) string {
	at := strings.LastIndexByte(s, '@')
	switch {
	case s == "":
		return "is required"
	case len(s) > maxEmailLen || at < 1 || at == len(s)-1 || strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}):
		return "must be an e-mail address"
	}
	return ""
}

func validCommitHash(s string) bool {
	return len(s) >= minCommitHashLen && len(s) <= maxCommitHashLen && commitHashPattern.MatchString(s)
}

// jsonProblem describes a decoding error without echoing the body.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("%s has the wrong type (want %s)", field, typeErr.Type)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at byte %d", syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	return "malformed JSON"
}

// testDirs and docDirs are path segments that mark tests and documentation.
var (
	testDirs = []string{"test", "tests", "__tests__", "spec", "specs", "testdata"}
	docDirs  = []string{"doc", "docs", "documentation"}
	docExts  = []string{".md", ".markdown", ".rst", ".adoc", ".txt"}
)

// IsTestPath reports whether a changed file looks like a test: under a test
// directory, or named like one in the common conventions (foo_test.go,
// test_foo.py, foo.test.ts, foo.spec.js, FooTest.java).
func IsTestPath(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if slices.Contains(testDirs, strings.ToLower(seg)) {
			return true
		}
	}
	base := path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	lower := strings.ToLower(base)
	return strings.Contains(lower, "_test.") || strings.HasPrefix(lower, "test_") ||
		strings.Contains(lower, ".test.") || strings.Contains(lower, ".spec.") || strings.Contains(lower, "_spec.") ||
		strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")
}

// IsDocPath reports whether a changed file is documentation: under a docs
// directory, a prose file (.md, .rst, ...), or a README or CHANGELOG.
func IsDocPath(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if slices.Contains(docDirs, strings.ToLower(seg)) {
			return true
		}
	}
	base := strings.ToLower(path.Base(p))
	return slices.Contains(docExts, path.Ext(base)) || strings.HasPrefix(base, "readme") || strings.HasPrefix(base, "changelog")
}

// KeyGitHub is the metadata key under which a webhook contribution keeps
// where it came from; it replaces any value a shaped body sent under it.
const KeyGitHub = "github"

// RecordedMetadata is the metadata stored with the contribution: the push's
// metadata plus, under "github", the delivery (when it had an id) and what
// it named.
func (p Push) RecordedMetadata(deliveryID string) map[string]any {
	out := make(map[string]any, len(p.Metadata)+1)
	for k, v := range p.Metadata {
		out[k] = v
	}
	origin := map[string]any{"repository": p.Repository}
	if deliveryID != "" {
		origin["delivery_id"] = deliveryID
	}
	if p.CommitHash != "" {
		origin["commit_hash"] = p.CommitHash
	}
	if p.Ref != "" {
		origin["ref"] = p.Ref
	}
	if p.Login != "" {
		origin["login"] = p.Login
	}
	if p.Email != "" {
		origin["email"] = p.Email
	}
	out[KeyGitHub] = origin
	return out
}

// ValidateDeliveryID checks an X-GitHub-Delivery value: optional (GitHub
// always sends it; scripts posting the shaped body need not), and when
// present at most MaxDeliveryIDLen printable characters.
func ValidateDeliveryID(id string) error {
	msg := ""
	switch {
	case len(id) > MaxDeliveryIDLen:
		msg = fmt.Sprintf("must be at most %d characters", MaxDeliveryIDLen)
	case strings.ContainsFunc(id, func(r rune) bool { return !unicode.IsPrint(r) }):
		msg = "must be printable"
	}
	if msg != "" {
		return fault.Validation(fault.Field(HeaderDelivery, "%s", msg))
	}
	return nil
}

// CheckRedeliveryKey checks a push can be recognised when it is delivered
// again: by its delivery id, else by its repository and commit hash. A push
// with neither would make a new contribution at every retry of its sender.
func (p Push) CheckRedeliveryKey(deliveryID string) error {
	if deliveryID != "" || p.CommitKey() != "" {
		return nil
	}
	field := "commit_hash"
	if !p.Shaped {
		field = "head_commit.id"
	}
	return fault.Validation(fault.Field(field,
		"is required without %s: a delivery without one is recognised by its repository and commit hash", HeaderDelivery))
}
