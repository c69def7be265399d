package idea_test

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

var (
	tagRule  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	idRule   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)
	stageSet = []string{"none", "specced", "implementing", "testing", "reviewing", "complete"}
)

// splitTags reads a fuzzed tag list: "|" separates tags, and an empty
// input is no tags at all.
func splitTags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}

// kind returns err's kind, failing the test for an unclassified error.
func kind(t *testing.T, err error) fault.Kind {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a fault.Error, got %v", err)
	return fe.Kind
}

// FuzzParseStage checks stage and manifestation names are accepted exactly
// as written (lowercase, no trimming) and only from their lists, and that
// an accepted stage has its place in the stage order.
func FuzzParseStage(f *testing.F) {
	for _, s := range []string{"none", "specced", "complete", "Complete", " none", "", "partial", "validated", "reviewing\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := idea.ParseStage(s)
		if slices.Contains(stageSet, s) {
			require.NoError(t, err)
			require.Equal(t, s, string(st))
			require.Equal(t, slices.Index(stageSet, s), st.Index())
			next, ok := st.Next()
			require.Equal(t, s != "complete", ok)
			if ok {
				require.Equal(t, st.Index()+1, next.Index())
			}
		} else {
			require.Error(t, err)
			require.Equal(t, -1, idea.Stage(s).Index())
		}
		m, err := idea.ParseManifestation(s)
		if slices.Contains([]string{"none", "partial", "validated"}, s) {
			require.NoError(t, err)
			require.Equal(t, s, string(m))
		} else {
			require.Error(t, err)
		}
	})
}

// FuzzNormalizeTags checks tag normalisation: what it returns is sorted,
// without duplicates, at most MaxTags tags each matching
// [a-z0-9][a-z0-9_-]{0,39}, normalising it again changes nothing, and it
// holds exactly the normalised input tags.
func FuzzNormalizeTags(f *testing.F) {
	for _, s := range []string{"", "ml", "  Machine Learning |ml|ML", "a b\tc", "-x", "x|", strings.Repeat("a", 40), strings.Repeat("a", 41),
		"\u212a", "İ", "a\u00a0b", "é", strings.Repeat("t|", 33) + "t", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		in := splitTags(raw)
		out, err := idea.NormalizeTags(in)
		if err != nil {
			require.Nil(t, out)
			return
		}
		require.LessOrEqual(t, len(out), idea.MaxTags)
		require.True(t, slices.IsSorted(out))
		require.Equal(t, slices.Compact(slices.Clone(out)), out)
		for _, tag := range out {
			require.Regexp(t, tagRule, tag)
		}
		again, err := idea.NormalizeTags(out)
		require.NoError(t, err)
		require.Equal(t, out, again)
		for _, tag := range in {
			require.Contains(t, out, idea.NormalizeTag(tag))
		}
		require.LessOrEqual(t, len(out), len(in))
	})
}

// FuzzNew checks a create request: an accepted draft gives an idea that
// satisfies every documented rule (id pattern, name 1..200 bytes,
// amounts finite in 0..1e12, confidence in 0..1, a known stage with its
// manifestation, normalised tags, a finite score); a refused one is a
// 422. Text is valid UTF-8 here, as protobuf guarantees every request
// string is.
func FuzzNew(f *testing.F) {
	f.Add("", "idea", "", 10.0, 2.0, 0.0, 0.0, 0.5, 1.0, "", "ml|ai")
	f.Add("my-idea.1", "x", "d", 1e12, 1e12, 0.0, 0.0, 1.0, 0.0, "complete", "")
	f.Add("-bad", "", "", -1.0, math.Inf(1), math.NaN(), 0.0, 1.5, -0.1, "Specced", "|")
	f.Add(strings.Repeat("a", 129), strings.Repeat("n", 201), "", 1e12+1, 5e-324, 0.0, 0.0, math.NaN(), math.NaN(), "none", "A B")
	f.Fuzz(func(t *testing.T, id, name, description string, potential, cost, actual, actualCost, confidence, risk float64, stage, tags string) {
		for _, s := range []string{id, name, description, stage, tags} {
			if !utf8.ValidString(s) {
				return
			}
		}
		d := idea.Draft{ID: id, Name: name, Description: description, PotentialValue: potential, EstimatedCost: cost,
			ActualValue: actual, ActualCost: actualCost, Confidence: &confidence, ResistanceRisk: &risk, Stage: stage, Tags: splitTags(tags)}
		i, err := idea.New(d, "generated-id", now)
		if err != nil {
			require.Equal(t, fault.Invalid, kind(t, err))
			return
		}
		if id == "" {
			require.Equal(t, "generated-id", i.ID)
		} else {
			require.Regexp(t, idRule, i.ID)
		}
		require.True(t, len(i.Name) >= 1 && len(i.Name) <= idea.MaxNameLen)
		require.LessOrEqual(t, len(i.Description), idea.MaxDescriptionLen)
		for _, x := range []float64{i.PotentialValue, i.EstimatedCost, i.ActualValue, i.ActualCost, i.ResistanceRisk} {
			require.True(t, x >= 0 && x <= 1e12, "amount %v", x)
		}
		require.True(t, i.Confidence >= 0 && i.Confidence <= 1)
		require.GreaterOrEqual(t, i.Stage.Index(), 0)
		require.Equal(t, idea.ManifestationFor(i.Stage), i.Manifestation)
		norm, err := idea.NormalizeTags(i.Tags)
		require.NoError(t, err)
		require.Equal(t, norm, i.Tags)
		score := i.Score()
		require.False(t, math.IsNaN(score) || math.IsInf(score, 0), "score %v", score)
	})
}

// FuzzApply checks a PATCH: the stage may only stay or move one step
// forward (and the manifestation follows it unless the patch names one),
// every rule of a new idea still holds after it, and a refused patch
// leaves the idea exactly as it was, as a 400 (empty) or 422.
func FuzzApply(f *testing.F) {
	f.Add(uint8(0), "specced", "", 0.5, "x", "a|b", uint8(0xff))
	f.Add(uint8(0), "testing", "validated", 2.0, "", "", uint8(0xff))
	f.Add(uint8(5), "complete", "partial", 0.0, "n", "", uint8(0x01))
	f.Add(uint8(3), "none", "bogus", math.NaN(), strings.Repeat("n", 201), "|", uint8(0x1f))
	f.Add(uint8(0), "", "", 0.0, "", "", uint8(0))
	f.Fuzz(func(t *testing.T, from uint8, stage, manifestation string, confidence float64, name, tags string, present uint8) {
		if !utf8.ValidString(stage + manifestation + name + tags) {
			return
		}
		start := idea.Stages[int(from)%len(idea.Stages)]
		orig, err := idea.New(idea.Draft{Name: "n", Stage: string(start), Tags: []string{"t"}}, "id-1", now)
		require.NoError(t, err)
		tagList := splitTags(tags)
		var p idea.Patch
		// Each bit of present says whether a field is in the patch.
		if present&1 != 0 {
			p.Stage = &stage
		}
		if present&2 != 0 {
			p.Manifestation = &manifestation
		}
		if present&4 != 0 {
			p.Confidence = &confidence
		}
		if present&8 != 0 {
			p.Name = &name
		}
		if present&16 != 0 {
			p.Tags = &tagList
		}
		i := orig
		err = i.Apply(p, now.Add(time.Hour))
		if err != nil {
			require.Contains(t, []fault.Kind{fault.Invalid, fault.Rejected}, kind(t, err))
			require.Equal(t, orig, i, "a refused patch changes nothing")
			return
		}
		require.True(t, i.Stage == orig.Stage || i.Stage.Index() == orig.Stage.Index()+1, "%s → %s", orig.Stage, i.Stage)
		if p.Manifestation == nil {
			require.Equal(t, idea.ManifestationFor(i.Stage), i.Manifestation)
		} else {
			require.Equal(t, manifestation, string(i.Manifestation))
		}
		require.True(t, i.Confidence >= 0 && i.Confidence <= 1)
		require.True(t, len(i.Name) >= 1 && len(i.Name) <= idea.MaxNameLen)
		norm, err := idea.NormalizeTags(i.Tags)
		require.NoError(t, err)
		require.Equal(t, norm, i.Tags)
		require.Equal(t, now.Add(time.Hour), i.UpdatedAt)
	})
}
