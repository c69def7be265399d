package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

const adminHeader = "X-API-Key: " + allinonetest.AdminKey

// createIdea posts an idea and requires a 201.
func createIdea(t *testing.T, sys *allinonetest.System, body map[string]any) map[string]any {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/ideas"), body)
	requireStatus(t, http.StatusCreated, r)
	return r.JSON
}

func ideaIDs(list map[string]any) []string {
	var out []string
	for _, i := range list["ideas"].([]any) {
		out = append(out, i.(map[string]any)["id"].(string))
	}
	return out
}

func TestIdeas(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		t.Run("create applies defaults and scores", func(t *testing.T) {
			got := createIdea(t, sys, map[string]any{"id": "worked", "name": "Worked example", "potential_value": 100, "estimated_cost": 10,
				"confidence": 0.5, "resistance_risk": 5})
			require.Equal(t, 3.3333, got["score"])
			require.Equal(t, "none", got["stage"])
			require.Equal(t, "none", got["manifestation_status"])
			require.Nil(t, got["parent_idea_id"])
			require.Equal(t, []any{}, got["tags"])

			d := createIdea(t, sys, map[string]any{"name": "Defaults", "potential_value": 10, "estimated_cost": 0, "resistance_risk": 0.2, "confidence": 1})
			require.Equal(t, 20.0, d["score"], "denominator floor 0.5")
			require.Regexp(t, `^[0-9a-f-]{36}$`, d["id"])

			def := createIdea(t, sys, map[string]any{"name": "Vectors", "potential_value": 100, "estimated_cost": 20})
			require.Equal(t, 0.5, def["confidence"])
			require.Equal(t, 1.0, def["resistance_risk"])
			require.Equal(t, map[string]any{"compute": 12.0, "infrastructure": 3.0, "human_attention": 5.0}, def["cost_vector"])
			require.Equal(t, map[string]any{"adoption": 50.0, "lineage": 30.0, "friction_avoided": 20.0}, def["value_vector"])

			r := request(t, http.MethodGet, sys.URL("/api/ideas/worked"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, 3.3333, r.JSON["score"])
		})

		t.Run("create rejects bad input", func(t *testing.T) {
			dup := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"id": "worked", "name": "again"})
			requireStatus(t, http.StatusConflict, dup)
			for name, body := range map[string]any{
				"missing name":      map[string]any{"potential_value": 1},
				"confidence > 1":    map[string]any{"name": "x", "confidence": 1.5},
				"negative cost":     map[string]any{"name": "x", "estimated_cost": -1},
				"unknown stage":     map[string]any{"name": "x", "stage": "done"},
				"score is computed": map[string]any{"name": "x", "score": 99},
				"wrong type":        map[string]any{"name": 5},
				"bad tag":           map[string]any{"name": "x", "tags": []string{"!!"}},
				"bad id":            map[string]any{"id": "a b", "name": "x"},
				"array body":        `[{"name":"x"}]`,
				"quoted number":     map[string]any{"name": "x", "potential_value": "5"},
				"NaN as a string":   map[string]any{"name": "x", "confidence": "NaN"},
			} {
				r := request(t, http.MethodPost, sys.URL("/api/ideas"), body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", name, r.Raw)
				requireStatus(t, http.StatusUnprocessableEntity, r)
			}
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/ideas/nope"), nil))
		})

		t.Run("patch", func(t *testing.T) {
			createIdea(t, sys, map[string]any{"id": "patchme", "name": "Patch me", "potential_value": 10, "estimated_cost": 1})
			r := request(t, http.MethodPatch, sys.URL("/api/ideas/patchme"), map[string]any{"actual_value": 4, "confidence": 0.9, "tags": []string{"B", " a "}})
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, 4.0, r.JSON["actual_value"])
			require.Equal(t, 0.9, r.JSON["confidence"])
			require.Equal(t, []any{"a", "b"}, r.JSON["tags"])
			require.Equal(t, 4.5, r.JSON["score"], "10 × 0.9 / (1 + 1)")

			requireStatus(t, http.StatusBadRequest, request(t, http.MethodPatch, sys.URL("/api/ideas/patchme"), map[string]any{}))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodPatch, sys.URL("/api/ideas/nope"), map[string]any{"actual_value": 1}))
			for name, body := range map[string]any{
				"confidence out of range": map[string]any{"confidence": -0.1},
				"score cannot be set":     map[string]any{"score": 1},
				"tags must be strings":    map[string]any{"tags": []any{"a", 1}},
				"bad manifestation":       map[string]any{"manifestation_status": "done"},
			} {
				r := request(t, http.MethodPatch, sys.URL("/api/ideas/patchme"), body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", name, r.Raw)
			}
			after := request(t, http.MethodGet, sys.URL("/api/ideas/patchme"), nil)
			require.Equal(t, 4.0, after.JSON["actual_value"], "refused patches changed nothing")
			require.Equal(t, 0.9, after.JSON["confidence"])
		})
	})
}

func TestRankingAndFilters(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		// Scores: top 16.6667, mid 5, low 4.5455, done 2.5 (validated).
		createIdea(t, sys, map[string]any{"id": "low", "name": "Low", "potential_value": 100, "estimated_cost": 10, "tags": []string{"ml"}})
		createIdea(t, sys, map[string]any{"id": "top", "name": "Top", "potential_value": 50, "estimated_cost": 0.5, "tags": []string{"ml", "infra"}})
		createIdea(t, sys, map[string]any{"id": "mid", "name": "Mid", "potential_value": 10, "estimated_cost": 0, "actual_value": 3})
		createIdea(t, sys, map[string]any{"id": "done", "name": "Done", "potential_value": 10, "estimated_cost": 1, "stage": "complete", "actual_value": 7})

		r := request(t, http.MethodGet, sys.URL("/api/ideas"), nil)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, []string{"top", "mid", "low", "done"}, ideaIDs(r.JSON))
		require.Equal(t, map[string]any{"total_ideas": 4.0, "unvalidated_ideas": 3.0, "validated_ideas": 1.0,
			"total_potential_value": 170.0, "total_actual_value": 10.0, "total_value_gap": 160.0}, r.JSON["summary"])
		_, page := listPage(t, r, "ideas")
		require.Equal(t, wantPage(50, 0, 4, false), page)

		r = request(t, http.MethodGet, sys.URL("/api/ideas?only_unvalidated=true"), nil)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, []string{"top", "mid", "low"}, ideaIDs(r.JSON))

		r = request(t, http.MethodGet, sys.URL("/api/ideas?limit=2&offset=1"), nil)
		require.Equal(t, []string{"mid", "low"}, ideaIDs(r.JSON))
		_, page = listPage(t, r, "ideas")
		require.Equal(t, wantPage(2, 1, 4, true), page)

		r = request(t, http.MethodGet, sys.URL("/api/ideas?tags=ml&tags=infra"), nil)
		require.Equal(t, []string{"top"}, ideaIDs(r.JSON))
		_, page = listPage(t, r, "ideas")
		require.Equal(t, wantPage(50, 0, 1, false), page)

		for _, q := range []string{"limit=0", "limit=501", "offset=-1", "limit=abc", "tags=!!"} {
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/ideas?"+q), nil))
		}

		tags := request(t, http.MethodGet, sys.URL("/api/ideas/tags"), nil)
		requireStatus(t, http.StatusOK, tags)
		require.Equal(t, []any{map[string]any{"tag": "infra", "idea_count": 1.0}, map[string]any{"tag": "ml", "idea_count": 2.0}}, tags.JSON["tags"])

		put := request(t, http.MethodPut, sys.URL("/api/ideas/mid/tags"), map[string]any{"tags": []string{"  Machine Learning ", "ML"}})
		requireStatus(t, http.StatusOK, put)
		require.Equal(t, []any{"machine-learning", "ml"}, put.JSON["tags"])
		requireStatus(t, http.StatusNotFound, request(t, http.MethodPut, sys.URL("/api/ideas/nope/tags"), map[string]any{"tags": []string{"a"}}))

		progress := request(t, http.MethodGet, sys.URL("/api/ideas/progress"), nil)
		requireStatus(t, http.StatusOK, progress)
		require.Equal(t, 4.0, progress.JSON["total_ideas"])
		require.Equal(t, 0.25, progress.JSON["completion_pct"])
		byStage := progress.JSON["by_stage"].(map[string]any)
		require.Len(t, byStage, 6, "all six stages are present")
		require.Equal(t, map[string]any{"count": 0.0, "idea_ids": []any{}}, byStage["testing"])
		require.Equal(t, map[string]any{"count": 1.0, "idea_ids": []any{"done"}}, byStage["complete"])
		require.Equal(t, 3.0, byStage["none"].(map[string]any)["count"])

		storage := request(t, http.MethodGet, sys.URL("/api/ideas/storage"), nil)
		requireStatus(t, http.StatusOK, storage)
		require.Equal(t, string(sys.Storage.Engine), storage.JSON["backend"])
		require.Equal(t, 4.0, storage.JSON["idea_count"])
		require.Equal(t, 5.0, storage.JSON["idea_tag_count"])
		require.GreaterOrEqual(t, storage.JSON["schema_version"], 2.0)
		require.NotContains(t, storage.JSON["database"], "password")
	})
}

func TestStages(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		createIdea(t, sys, map[string]any{"id": "walk", "name": "Walk"})
		for _, want := range []struct{ stage, status string }{
			{"specced", "partial"}, {"implementing", "partial"}, {"testing", "partial"}, {"reviewing", "partial"}, {"complete", "validated"},
		} {
			r := request(t, http.MethodPost, sys.URL("/api/ideas/walk/advance"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, want.stage, r.JSON["stage"])
			require.Equal(t, want.status, r.JSON["manifestation_status"])
		}
		before := request(t, http.MethodGet, sys.URL("/api/ideas/walk"), nil)
		requireStatus(t, http.StatusConflict, request(t, http.MethodPost, sys.URL("/api/ideas/walk/advance"), nil))
		after := request(t, http.MethodGet, sys.URL("/api/ideas/walk"), nil)
		require.Equal(t, string(before.Raw), string(after.Raw), "a refused advance leaves the idea unchanged")
		requireStatus(t, http.StatusNotFound, request(t, http.MethodPost, sys.URL("/api/ideas/nope/advance"), nil))

		createIdea(t, sys, map[string]any{"id": "jump", "name": "Jump"})
		requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "testing"}, anonymous))
		requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "testing"}, "X-API-Key: wrong"))
		requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "done"}, adminHeader))
		r := request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "testing"}, adminHeader)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "testing", r.JSON["stage"], "the explicit endpoint moves to a non-adjacent stage")
		require.Equal(t, "partial", r.JSON["manifestation_status"])

		t.Run("advance with a body: the next stage only, and a strict body", func(t *testing.T) {
			createIdea(t, sys, map[string]any{"id": "named", "name": "Named"})
			advance := func(body any) response {
				return request(t, http.MethodPost, sys.URL("/api/ideas/named/advance"), body)
			}
			jump := advance(map[string]any{"stage": "testing"})
			requireStatus(t, http.StatusConflict, jump)
			require.Contains(t, jump.JSON["detail"], "from none that is specced, not testing", "a non-adjacent stage is rejected")
			requireFieldError(t, advance(map[string]any{"stage": "done"}), "stage")
			unknown := advance(`{"stag": "specced"}`)
			requireStatus(t, http.StatusUnprocessableEntity, unknown)
			require.Equal(t, "stag: is not a field of this request", unknown.JSON["detail"], "the field is named, not the parser")
			require.Equal(t, []any{map[string]any{"field": "stag", "message": "is not a field of this request"}}, unknown.JSON["errors"])
			requireStatus(t, http.StatusUnprocessableEntity, advance(`{"stage":`))
			ok := advance(map[string]any{"stage": "specced"})
			requireStatus(t, http.StatusOK, ok)
			require.Equal(t, "specced", ok.JSON["stage"])
			requireStatus(t, http.StatusOK, advance(nil)) // no body: the next stage, as before
		})

		t.Run("concurrent advances never skip", func(t *testing.T) {
			createIdea(t, sys, map[string]any{"id": "race", "name": "Race"})
			const racers = 4
			var wg sync.WaitGroup
			stages := make([]string, racers)
			for k := range racers {
				wg.Go(func() {
					r := request(t, http.MethodPost, sys.URL("/api/ideas/race/advance"), nil)
					if r.Status == http.StatusOK {
						stages[k] = r.JSON["stage"].(string)
					}
				})
			}
			wg.Wait()
			sort.Slice(stages, func(a, b int) bool { return stageIndex(stages[a]) < stageIndex(stages[b]) })
			require.Equal(t, []string{"specced", "implementing", "testing", "reviewing"}, stages, "each advance moved exactly one stage")
			final := request(t, http.MethodGet, sys.URL("/api/ideas/race"), nil)
			require.Equal(t, "reviewing", final.JSON["stage"])
		})

		t.Run("a completed task advances its idea once (gRPC, as the agent service calls it)", func(t *testing.T) {
			createIdea(t, sys, map[string]any{"id": "tasked", "name": "Tasked"})
			client := portfoliointernalv1.NewPortfolioInternalServiceClient(sys.Dial(t))
			ctx := context.Background()
			resp, err := client.AdvanceForTask(ctx, &portfoliointernalv1.AdvanceForTaskRequest{IdeaId: "tasked", TaskType: "spec", TaskId: "t1"})
			require.NoError(t, err)
			require.True(t, resp.GetAdvanced())
			require.Equal(t, portfoliov1.Stage_none, resp.GetPreviousStage())
			require.Equal(t, portfoliov1.Stage_specced, resp.GetIdea().GetStage())
			again, err := client.AdvanceForTask(ctx, &portfoliointernalv1.AdvanceForTaskRequest{IdeaId: "tasked", TaskType: "spec", TaskId: "t1"})
			require.NoError(t, err)
			require.False(t, again.GetAdvanced(), "the same task id does not move the idea twice")
			require.Equal(t, portfoliov1.Stage_specced, again.GetIdea().GetStage())

			cands, err := client.ListCandidates(ctx, &portfoliointernalv1.ListCandidatesRequest{})
			require.NoError(t, err)
			next := map[string]string{}
			for _, c := range cands.GetCandidates() {
				next[c.GetIdea().GetId()] = c.GetNextTaskType()
			}
			require.Equal(t, "impl", next["tasked"])
			require.NotContains(t, next, "walk", "complete ideas are not candidates")
		})

		t.Run("every stage change is in the idea's history: from, to, when, by whom, why", func(t *testing.T) {
			createIdea(t, sys, map[string]any{"id": "storied", "name": "Storied"})
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/ideas/storied/advance"), nil))
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/ideas/storied/stage"), map[string]any{"stage": "testing"}))
			requireStatus(t, http.StatusOK, request(t, http.MethodPatch, sys.URL("/api/ideas/storied"), map[string]any{"description": "no move"}))
			client := portfoliointernalv1.NewPortfolioInternalServiceClient(sys.Dial(t))
			_, err := client.AdvanceForTask(context.Background(), &portfoliointernalv1.AdvanceForTaskRequest{IdeaId: "storied", TaskType: "review", TaskId: "rev-1"})
			require.NoError(t, err)

			r := request(t, http.MethodGet, sys.URL("/api/ideas/storied/stages"), nil)
			requireStatus(t, http.StatusOK, r)
			var got []string
			for _, c := range r.JSON["changes"].([]any) {
				ch := c.(map[string]any)
				from, _ := ch["from"].(string)
				got = append(got, fmt.Sprintf("%s>%s %s by %s", from, ch["to"], ch["reason"], ch["by"]))
				_, err := time.Parse(time.RFC3339Nano, ch["at"].(string))
				require.NoError(t, err, "at is a time")
			}
			require.Equal(t, []string{
				">none created by admin",
				"none>specced advance by admin",
				"specced>testing operator by admin",
				"testing>reviewing task by task:rev-1",
			}, got, "a PATCH that moves no stage is not a change")
			require.Nil(t, r.JSON["changes"].([]any)[0].(map[string]any)["from"], "a creation has no from")
			for _, c := range r.JSON["changes"].([]any) {
				require.Contains(t, c, "by_handle")
				require.Nil(t, c.(map[string]any)["by_handle"], "the administrator and a task are no contributor")
			}
			require.Equal(t, wantPage(50, 0, 4, false), r.JSON["pagination"], "the default page")
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/ideas/nobody/stages"), nil))
		})

		t.Run("a contributor's change names it by handle", func(t *testing.T) {
			ada := registerUser(t, sys, "ada-stages")
			created := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"id": "adas", "name": "Ada's"}, ada.bearer())
			requireStatus(t, http.StatusCreated, created)
			r := request(t, http.MethodGet, sys.URL("/api/ideas/adas/stages"), nil)
			requireStatus(t, http.StatusOK, r)
			changes := r.JSON["changes"].([]any)
			require.Len(t, changes, 1)
			require.Equal(t, []any{ada.id, "ada-stages"}, []any{changes[0].(map[string]any)["by"], changes[0].(map[string]any)["by_handle"]},
				"the handle her session carried")
		})

		t.Run("an idea's history pages like every list", func(t *testing.T) {
			// storied's four changes, two at a time.
			var reasons []string
			for offset := 0; offset < 4; offset += 2 {
				r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/ideas/storied/stages?limit=2&offset=%d", offset)), nil)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, wantPage(2, offset, 4, offset == 0), r.JSON["pagination"])
				for _, c := range r.JSON["changes"].([]any) {
					reasons = append(reasons, c.(map[string]any)["reason"].(string))
				}
			}
			require.Equal(t, []string{"created", "advance", "operator", "task"}, reasons, "the pages make up the history, oldest first")
			past := request(t, http.MethodGet, sys.URL("/api/ideas/storied/stages?offset=9"), nil)
			requireStatus(t, http.StatusOK, past)
			require.Equal(t, []any{}, past.JSON["changes"], "past the end: empty, not null")
			require.Equal(t, wantPage(50, 9, 4, false), past.JSON["pagination"])
			for _, q := range []string{"limit=0", "limit=501", "limit=-1", "limit=x"} {
				requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/ideas/storied/stages?"+q), nil), "limit")
			}
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/ideas/storied/stages?offset=-1"), nil), "offset")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/ideas/nobody/stages?limit=0"), nil), "limit")
		})
	})
}

func stageIndex(s string) int {
	return strings.Index("none specced implementing testing reviewing complete", s)
}

func TestRightSizing(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		createIdea(t, sys, map[string]any{"id": "big", "name": "Rewrite billing", "description": "everything about invoices and payments",
			"potential_value": 100, "estimated_cost": 40, "tags": []string{"billing"}})
		for k := range 12 {
			r := request(t, http.MethodPost, sys.URL("/api/ideas/big/questions"), map[string]any{"question": fmt.Sprintf("open question %d?", k+1)})
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, "open", r.JSON["status"])
		}
		requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/ideas/big/questions"), map[string]any{"question": ""}))
		requireStatus(t, http.StatusNotFound, request(t, http.MethodPost, sys.URL("/api/ideas/nope/questions"), map[string]any{"question": "?"}))
		qs := request(t, http.MethodGet, sys.URL("/api/ideas/big/questions"), nil)
		requireStatus(t, http.StatusOK, qs)
		require.Len(t, qs.JSON["questions"], 12)

		createIdea(t, sys, map[string]any{"id": "cache-a", "name": "Cache invoices", "description": "cache invoice rendering results in redis", "potential_value": 10})
		createIdea(t, sys, map[string]any{"id": "cache-b", "name": "Cache invoices", "description": "cache invoice rendering results in redis quickly", "potential_value": 20})
		createIdea(t, sys, map[string]any{"id": "lonely", "name": "Tweak colors", "stage": "specced"})

		r := request(t, http.MethodGet, sys.URL("/api/ideas/right-sizing"), nil)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, map[string]any{"total_ideas": 4.0, "too_large": 1.0, "too_small": 1.0, "overlap": 2.0, "healthy": 0.0, "suggestion_count": 2.0}, r.JSON["health"])
		var split, merge map[string]any
		for _, s := range r.JSON["suggestions"].([]any) {
			s := s.(map[string]any)
			switch s["suggestion_type"] {
			case "split":
				split = s
			case "merge":
				merge = s
			}
		}
		require.Equal(t, "big", split["idea_id"])
		require.Equal(t, 0.6, split["confidence"], "0.5 + 0.05 × 2 questions over the threshold")
		require.Len(t, split["proposed_children"], 3)
		require.Nil(t, split["overlap_with_id"])
		require.Equal(t, "cache-b", merge["idea_id"], "the higher score keeps")
		require.Equal(t, "cache-a", merge["overlap_with_id"])
		require.GreaterOrEqual(t, merge["confidence"], 0.8)
		require.NotEmpty(t, merge["rationale"])

		t.Run("dry run changes nothing, byte for byte", func(t *testing.T) {
			before := request(t, http.MethodGet, sys.URL("/api/ideas?limit=500"), nil)
			for _, body := range []map[string]any{
				{"suggestion_type": "split", "idea_id": "big", "action": "split_into_children"},
				{"suggestion_type": "split", "idea_id": "big", "dry_run": true},
				{"suggestion_type": "merge", "idea_id": "cache-b", "overlap_with_id": "cache-a", "action": "merge_and_archive"},
			} {
				r := request(t, http.MethodPost, sys.URL("/api/ideas/right-sizing/apply"), body, anonymous) // a dry run needs no credential
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, false, r.JSON["applied"])
				require.Equal(t, true, r.JSON["dry_run"])
				require.NotEmpty(t, r.JSON["changes"])
			}
			after := request(t, http.MethodGet, sys.URL("/api/ideas?limit=500"), nil)
			require.Equal(t, string(before.Raw), string(after.Raw))
		})

		t.Run("apply needs the admin key and valid input", func(t *testing.T) {
			body := map[string]any{"suggestion_type": "split", "idea_id": "big", "dry_run": false}
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/ideas/right-sizing/apply"), body, anonymous))
			for name, bad := range map[string]map[string]any{
				"unknown type":        {"suggestion_type": "grow", "idea_id": "big"},
				"mismatched action":   {"suggestion_type": "split", "idea_id": "big", "action": "merge_and_archive"},
				"merge with itself":   {"suggestion_type": "merge", "idea_id": "big", "overlap_with_id": "big"},
				"merge without other": {"suggestion_type": "merge", "idea_id": "big"},
			} {
				r := request(t, http.MethodPost, sys.URL("/api/ideas/right-sizing/apply"), bad, adminHeader)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", name, r.Raw)
			}
			requireStatus(t, http.StatusNotFound, request(t, http.MethodPost, sys.URL("/api/ideas/right-sizing/apply"),
				map[string]any{"suggestion_type": "split", "idea_id": "nope"}, anonymous))
		})

		t.Run("a real split creates the children, marked with their parent", func(t *testing.T) {
			r := request(t, http.MethodPost, sys.URL("/api/ideas/right-sizing/apply"), map[string]any{
				"suggestion_type": "split", "idea_id": "big", "action": "split_into_children", "dry_run": false,
				"proposed_children": []map[string]any{{"name": "Invoices", "description": "just invoices"}, {"name": "Payments"}},
			}, adminHeader)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, true, r.JSON["applied"])
			var childIDs []string
			for _, c := range r.JSON["changes"].([]any) {
				c := c.(map[string]any)
				if c["change_type"] == "create_idea" {
					childIDs = append(childIDs, c["idea_id"].(string))
				}
			}
			require.Len(t, childIDs, 2)
			for _, id := range childIDs {
				child := request(t, http.MethodGet, sys.URL("/api/ideas/"+id), nil)
				requireStatus(t, http.StatusOK, child)
				require.Equal(t, "big", child.JSON["parent_idea_id"])
				require.Equal(t, 50.0, child.JSON["potential_value"], "an equal share of the parent's value")
				require.Equal(t, []any{"billing"}, child.JSON["tags"])
			}
		})

		t.Run("a real merge archives the duplicate", func(t *testing.T) {
			r := request(t, http.MethodPost, sys.URL("/api/ideas/right-sizing/apply"), map[string]any{
				"suggestion_type": "merge", "idea_id": "cache-b", "overlap_with_id": "cache-a", "dry_run": false,
			}, adminHeader)
			requireStatus(t, http.StatusOK, r)
			folded := request(t, http.MethodGet, sys.URL("/api/ideas/cache-a"), nil)
			require.Equal(t, true, folded.JSON["archived"])
			list := request(t, http.MethodGet, sys.URL("/api/ideas"), nil)
			require.NotContains(t, ideaIDs(list.JSON), "cache-a")
			requireStatus(t, http.StatusConflict, request(t, http.MethodPatch, sys.URL("/api/ideas/cache-a"), map[string]any{"actual_value": 1}))
		})

		t.Run("history", func(t *testing.T) {
			for _, q := range []string{"days=0", "days=366", "days=x"} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/ideas/right-sizing/history?"+q), nil))
			}
			snaps := waitSnapshots(t, sys, "?days=1", 1)
			require.Len(t, snaps, 1, "one snapshot taken at startup")
		})
	})
}

func TestHealthHistorySurvivesRestart(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine))
		waitSnapshots(t, sys, "", 1) // the startup snapshot runs in the background
		createIdea(t, sys, map[string]any{"id": "x", "name": "X"})
		sys.Restart()
		snaps := waitSnapshots(t, sys, "", 2)
		require.Len(t, snaps, 2, "the first run's snapshot persisted; the restart took another")
		require.Equal(t, 0.0, snaps[0].(map[string]any)["total_ideas"])
		require.Equal(t, 1.0, snaps[1].(map[string]any)["total_ideas"])
		require.LessOrEqual(t, snaps[0].(map[string]any)["taken_at"], snaps[1].(map[string]any)["taken_at"])
	})
}

// waitSnapshots polls the health history until it holds at least n
// snapshots (the startup snapshot is taken in the background) and returns
// them.
func waitSnapshots(t *testing.T, sys *allinonetest.System, query string, n int) []any {
	t.Helper()
	var snaps []any
	require.Eventually(t, func() bool {
		h := request(t, http.MethodGet, sys.URL("/api/ideas/right-sizing/history"+query), nil)
		requireStatus(t, http.StatusOK, h)
		snaps, _ = h.JSON["snapshots"].([]any)
		return len(snaps) >= n
	}, 20*time.Second, 20*time.Millisecond, "want %d health snapshots", n)
	return snaps
}
