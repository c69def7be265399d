package usecase

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/prompt"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// NewPrompt is a stored prompt's create request.
type NewPrompt struct {
	Name string
	Type string
	Text string
	// Version is the version to store (0: the name's next).
	Version int
}

// CreatePrompt stores a version of a prompt: the next of its name unless
// one is given, which must be newer than the name's newest (409 when it
// is not). A name keeps the task type of its first version.
func (a *App) CreatePrompt(ctx context.Context, in NewPrompt) (store.Prompt, error) {
	in.Name = strings.TrimSpace(in.Name)
	if err := prompt.Validate(in.Name, in.Type, in.Text, in.Version); err != nil {
		return store.Prompt{}, err
	}
	var out store.Prompt
	err := a.tx(ctx, func(r Repos) error {
		latest, err := r.Prompts.Prompt(ctx, in.Name, 0)
		switch {
		case isNotFound(err):
		case err != nil:
			return err
		case string(latest.Type) != in.Type:
			return fault.New(fault.Conflict, "prompt %s is a %s prompt: a name keeps its task type", in.Name, latest.Type)
		case in.Version != 0 && in.Version <= latest.Version:
			return fault.New(fault.Conflict, "prompt %s has version %d already: a new version is newer", in.Name, latest.Version)
		}
		out = store.Prompt{Name: in.Name, Version: in.Version, Type: task.Type(in.Type), Text: in.Text, CreatedAt: a.now()}
		if out.Version == 0 {
			out.Version = latest.Version + 1
		}
		if err := r.Prompts.InsertPrompt(ctx, out); err != nil {
			if errors.Is(err, store.ErrAlreadyExists) {
				return fault.New(fault.Conflict, "prompt %s has version %d already", in.Name, out.Version)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return store.Prompt{}, wrap("store prompt "+in.Name, err)
	}
	a.forgetPrompts()
	a.log.Info("prompt stored", zap.String("prompt", out.Name), zap.Int("version", out.Version), zap.String("task_type", string(out.Type)))
	return out, nil
}

// Prompt returns a version of a prompt (its newest when version is 0).
func (a *App) Prompt(ctx context.Context, name string, version int) (store.Prompt, error) {
	if version < 0 {
		return store.Prompt{}, fault.Validation(fault.Field("version", "must be 1 or more"))
	}
	p, err := a.read().Prompts.Prompt(ctx, name, version)
	if isNotFound(err) {
		if version > 0 {
			return store.Prompt{}, fault.New(fault.NotFound, "prompt %s has no version %d", name, version)
		}
		return store.Prompt{}, fault.New(fault.NotFound, "prompt %s not found", name)
	}
	return p, wrap("read prompt "+name, err)
}

// Prompts lists the newest version of every prompt, of one task type
// when given, by name.
func (a *App) Prompts(ctx context.Context, taskType string) ([]store.Prompt, error) {
	var typ task.Type
	if taskType != "" {
		t, ok := task.ParseType(taskType)
		if !ok {
			return nil, fault.Validation(fault.Field("task_type", "is not a task type"))
		}
		typ = t
	}
	out, err := a.read().Prompts.LatestPrompts(ctx, typ)
	return out, wrap("list prompts", err)
}

// chosen is the prompt a new task gets: its variant (or none), the stored
// prompt's version (0 for none), the template its prompt is rendered from,
// and how the variant was chosen.
type chosen struct {
	Variant  string
	Version  int
	Template string
	Source   string
}

// choosePrompt picks a new task's prompt. A variant the context names is
// taken as given (its stored prompt, when one of the task's type has the
// name). Otherwise, when prompts of the task's type are stored, one of
// them by abtest.Select; else, as before prompts were stored, one of the
// label-only variants (configured or recorded, stored prompts' names left
// out), or none. A blocked variant's due probe is taken once
// (Prompts.StartProbe): when another task took it first, the choice is
// made again without it. The template is the stored prompt's text, or
// prompt.Default.
func (a *App) choosePrompt(ctx context.Context, typ task.Type, given string) (chosen, error) {
	stored, err := a.storedPrompts(ctx)
	if err != nil {
		return chosen{}, err
	}
	ofType := map[string]store.Prompt{}
	names := map[string]bool{}
	for _, p := range stored {
		names[p.Name] = true
		if p.Type == typ {
			ofType[p.Name] = p
		}
	}
	pick := func(variant, source string) chosen {
		if p, ok := ofType[variant]; ok {
			return chosen{Variant: variant, Version: p.Version, Template: p.Text, Source: source}
		}
		return chosen{Variant: variant, Template: prompt.Default, Source: source}
	}
	if given != "" {
		return pick(given, "context"), nil
	}
	arms, err := a.arms(ctx)
	if err != nil {
		return chosen{}, err
	}
	var candidates []abtest.Arm
	if len(ofType) > 0 {
		for name := range ofType {
			i := slices.IndexFunc(arms, func(x abtest.Arm) bool { return x.Variant == name })
			if i < 0 {
				candidates = append(candidates, abtest.Arm{Variant: name})
				continue
			}
			candidates = append(candidates, arms[i])
		}
		candidates = abtest.Sorted(candidates)
	} else {
		for _, arm := range arms {
			if !names[arm.Variant] {
				candidates = append(candidates, arm)
			}
		}
	}
	for range 2 {
		v, probe, ok := a.draw(abtest.Choice{Arms: candidates, Now: a.now(), CoolOff: a.cfg.CoolOff})
		if !ok {
			return pick("", ""), nil
		}
		if !probe {
			return pick(v, "selected"), nil
		}
		took, err := a.read().Prompts.StartProbe(ctx, v)
		if err != nil {
			return chosen{}, err
		}
		if took {
			return pick(v, "probe"), nil
		}
		i := slices.IndexFunc(candidates, func(x abtest.Arm) bool { return x.Variant == v })
		candidates[i].Probe = abtest.Probing // another task probes it
	}
	return pick("", ""), nil
}

// PromptCacheTTL is how long a replica reuses the stored prompts it read:
// a create reads them once in that time, not once a task, and a prompt
// stored on another replica is in use everywhere within it.
const PromptCacheTTL = 5 * time.Second

// promptCache holds the newest version of every stored prompt, as read at
// at.
type promptCache struct {
	mu      sync.Mutex
	prompts []store.Prompt
	at      time.Time
	valid   bool
}

// storedPrompts is the newest version of every stored prompt, read again
// when the cache is older than PromptCacheTTL.
func (a *App) storedPrompts(ctx context.Context) ([]store.Prompt, error) {
	now := a.now()
	a.promptCache.mu.Lock()
	if c := &a.promptCache; c.valid && now.Sub(c.at) < PromptCacheTTL && !now.Before(c.at) {
		defer a.promptCache.mu.Unlock()
		return c.prompts, nil
	}
	a.promptCache.mu.Unlock()
	ps, err := a.read().Prompts.LatestPrompts(ctx, "")
	if err != nil {
		return nil, err
	}
	a.promptCache.mu.Lock()
	a.promptCache.prompts, a.promptCache.at, a.promptCache.valid = ps, now, true
	a.promptCache.mu.Unlock()
	return ps, nil
}

// forgetPrompts drops the cache: a prompt stored here is used at once.
func (a *App) forgetPrompts() {
	a.promptCache.mu.Lock()
	a.promptCache.valid = false
	a.promptCache.mu.Unlock()
}

// draw is abtest.Select with the App's seeded source.
func (a *App) draw(c abtest.Choice) (string, bool, bool) {
	a.rndMu.Lock()
	defer a.rndMu.Unlock()
	return abtest.Select(c, a.rnd)
}

// probabilities estimates each arm's selection probability within its
// group: the stored prompts of one task type compete with each other, the
// label-only variants among themselves (byName holds the stored prompts
// by name; a variant not there is label-only).
func (a *App) probabilities(arms []abtest.Arm, byName map[string]store.Prompt) map[string]float64 {
	groups := map[task.Type][]abtest.Arm{}
	for _, arm := range arms {
		groups[byName[arm.Variant].Type] = append(groups[byName[arm.Variant].Type], arm) // "" for the label-only ones
	}
	rnd := rand.New(rand.NewPCG(a.cfg.Seed, a.cfg.Seed^0x5eed))
	out := map[string]float64{}
	for _, typ := range slices.Sorted(maps.Keys(groups)) {
		for v, p := range abtest.Probabilities(abtest.Choice{Arms: groups[typ], Now: a.now(), CoolOff: a.cfg.CoolOff}, rnd, a.cfg.ABDraws) {
			out[v] = p
		}
	}
	return out
}
