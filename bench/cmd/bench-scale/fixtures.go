package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

const (
	// stakeCC is what each stake moves: credit.MinMovement, the least a
	// client may move, so a contributor's funds last longest.
	stakeCC = 0.01
	// fundedStakes is how many stakes each contributor's first deposit
	// pays for: more than the seed and both phases' stake route make from
	// one contributor.
	fundedStakes = 100_000
)

// contributor is a registered contributor and its session's
// Authorization header.
type contributor struct {
	id   string
	auth http.Header
}

// fixtures are what both phases measure the routes against, made once on
// the young system: the seed grows the lists they head (the large asset's
// contributions, the busy contributor's, the hub's edges).
type fixtures struct {
	admin, operator, worker http.Header
	// busy is the contributor whose contributions and investment history
	// the seed grows most; others stake and contribute beside it.
	busy   contributor
	others []contributor
	// ideas are staked on; ideas[0] is the idea read by id.
	ideas []string
	// assets are contributed to; assets[0] is the large one.
	assets []string
	// hub is the graph node with many edges; leaf its first neighbour.
	hub, leaf string
	// fundUSD is the deposit that pays for fundedStakes stakes.
	fundUSD float64
}

// makeFixtures makes, through the API: an operator's and a worker's
// tokens, four contributors each with a deposit, four ideas, four assets
// and two contributions to the first, a stake, three tasks (one completed,
// one failed, one pending) and a graph node with an edge.
func makeFixtures(ctx context.Context, sys *system) (*fixtures, error) {
	fx := &fixtures{admin: http.Header{"X-API-Key": {harness.AdminKey}}}
	for role, dst := range map[string]*http.Header{"operator": &fx.operator, "worker": &fx.worker} {
		var tok struct {
			Token string `json:"token"`
		}
		if err := sys.call(ctx, http.MethodPost, "/api/tokens", map[string]any{"name": "scale " + role, "role": role}, fx.admin, &tok); err != nil {
			return nil, err
		}
		*dst = bearer(tok.Token)
	}
	usd, rate, err := harness.USDFor(ctx, sys.client, sys.base, fundedStakes*stakeCC)
	if err != nil {
		return nil, err
	}
	fx.fundUSD = usd
	for i, handle := range []string{"scale-busy", "scale-c1", "scale-c2", "scale-c3"} {
		c, err := registerFunded(ctx, sys, fx, handle)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			fx.busy = c
		} else {
			fx.others = append(fx.others, c)
		}
	}
	for i := range 4 {
		var idea struct {
			ID string `json:"id"`
		}
		body := map[string]any{"name": fmt.Sprintf("Scale idea %d", i), "potential_value": 100 + i, "estimated_cost": 10}
		if err := sys.call(ctx, http.MethodPost, "/api/ideas", body, fx.admin, &idea); err != nil {
			return nil, err
		}
		fx.ideas = append(fx.ideas, idea.ID)
	}
	for i := range 4 {
		id, err := createAsset(ctx, sys, fx, fmt.Sprintf("scale asset %d", i))
		if err != nil {
			return nil, err
		}
		fx.assets = append(fx.assets, id)
	}
	for _, c := range []contributor{fx.busy, fx.others[0]} {
		if err := contribute(ctx, sys, fx, c.id, fx.assets[0], 1.5); err != nil {
			return nil, err
		}
	}
	if err := stake(ctx, sys, fx.busy, fx.ideas[0]); err != nil {
		return nil, err
	}
	// One task completed, one failed, one left pending.
	for i := range 3 {
		id, err := createTask(ctx, sys, fx, i)
		if err != nil {
			return nil, err
		}
		if i < 2 {
			if err := claimTask(ctx, sys, fx, id); err != nil {
				return nil, err
			}
			if err := endTask(ctx, sys, fx, id, i == 1); err != nil {
				return nil, err
			}
		}
	}
	if fx.hub, err = node(ctx, sys, fx, "scale-hub", "hub"); err != nil {
		return nil, err
	}
	if fx.leaf, err = node(ctx, sys, fx, "scale-leaf", "leaf-fixture"); err != nil {
		return nil, err
	}
	if err := edge(ctx, sys, fx, "scale-spoke", fx.hub, fx.leaf); err != nil {
		return nil, err
	}
	fmt.Printf("fixtures: 4 contributors with %.2f USD each (%d stakes of %v CC at %v CC/USD), 4 ideas, 4 assets, "+
		"2 contributions, 1 stake, 3 tasks, 2 graph nodes and an edge\n", usd, fundedStakes, stakeCC, rate)
	return fx, nil
}

// The calls below are the fixtures' and the seed's: each makes one row
// of what it names, through the route a client would use.

// registerFunded registers a contributor and deposits fx.fundUSD for it.
func registerFunded(ctx context.Context, sys *system, fx *fixtures, handle string) (contributor, error) {
	id, token, err := harness.Register(ctx, sys.client, sys.base, handle)
	if err != nil {
		return contributor{}, err
	}
	if err := deposit(ctx, sys, fx, id, fx.fundUSD, "fund-"+handle); err != nil {
		return contributor{}, err
	}
	return contributor{id: id, auth: bearer(token)}, nil
}

// bearer is the Authorization header that presents token.
func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

func deposit(ctx context.Context, sys *system, fx *fixtures, contributorID string, usd float64, reference string) error {
	body := map[string]any{"contributor_id": contributorID, "amount_usd": usd, "reference": reference}
	return sys.call(ctx, http.MethodPost, "/api/cc/deposit", body, fx.admin, nil)
}

func stake(ctx context.Context, sys *system, c contributor, idea string) error {
	body := map[string]any{"contributor_id": c.id, "idea_id": idea, "amount_cc": stakeCC}
	return sys.call(ctx, http.MethodPost, "/api/cc/stake", body, c.auth, nil)
}

func createAsset(ctx context.Context, sys *system, fx *fixtures, name string) (string, error) {
	var asset struct {
		ID string `json:"id"`
	}
	err := sys.call(ctx, http.MethodPost, "/api/assets", map[string]any{"type": "CODE", "name": name}, fx.admin, &asset)
	return asset.ID, err
}

// contribute records a contribution as the operator, who records them for
// anyone.
func contribute(ctx context.Context, sys *system, fx *fixtures, contributorID, asset string, cost float64) error {
	body := map[string]any{"contributor_id": contributorID, "asset_id": asset, "cost_amount": cost, "metadata": map[string]any{}}
	return sys.call(ctx, http.MethodPost, "/api/contributions", body, fx.operator, nil)
}

// taskType is the type of the i-th task: a few types, in turn.
func taskType(i int) string {
	switch i % 3 {
	case 0:
		return "impl"
	case 1:
		return "spec"
	}
	return "review"
}

// createTask creates the i-th task (pending) as the operator.
func createTask(ctx context.Context, sys *system, fx *fixtures, i int) (string, error) {
	var t struct {
		ID string `json:"id"`
	}
	body := map[string]any{"direction": fmt.Sprintf("scale task %d", i), "task_type": taskType(i)}
	err := sys.call(ctx, http.MethodPost, "/api/agent/tasks", body, fx.operator, &t)
	return t.ID, err
}

// worker is the worker_id the worker claims and reports as: a worker
// names itself on every report about a task it runs.
const worker = "scale-worker"

// claimTask has the worker take a task (PATCH running), as a worker does.
func claimTask(ctx context.Context, sys *system, fx *fixtures, id string) error {
	body := map[string]any{"status": "running", "worker_id": worker}
	return sys.call(ctx, http.MethodPatch, "/api/agent/tasks/"+id, body, fx.worker, nil)
}

// endTask has the worker that claimed a task report its end: completed,
// or failed with an executor's output.
func endTask(ctx context.Context, sys *system, fx *fixtures, id string, failed bool) error {
	body := map[string]any{"status": "completed", "output": "ok", "worker_id": worker}
	if failed {
		body = map[string]any{"status": "failed", "output": "provider returned 503", "worker_id": worker}
	}
	return sys.call(ctx, http.MethodPatch, "/api/agent/tasks/"+id, body, fx.worker, nil)
}

func node(ctx context.Context, sys *system, fx *fixtures, nodeType, externalID string) (string, error) {
	var n struct {
		ID string `json:"id"`
	}
	body := map[string]any{"node_type": nodeType, "external_id": externalID, "payload": map[string]any{"name": externalID}}
	err := sys.call(ctx, http.MethodPost, "/api/graph/nodes", body, fx.operator, &n)
	return n.ID, err
}

func edge(ctx context.Context, sys *system, fx *fixtures, edgeType, from, to string) error {
	body := map[string]any{"edge_type": edgeType, "from_node_id": from, "to_node_id": to}
	return sys.call(ctx, http.MethodPost, "/api/graph/edges", body, fx.operator, nil)
}
