package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// CreateIdea validates a draft and stores the idea it describes (a new id
// when the draft has none), stamped with the current time and, for a
// contributor, with its creator. store.ErrAlreadyExists when the id is
// taken.
func (a *App) CreateIdea(ctx context.Context, ed idea.Editor, d idea.Draft) (idea.Idea, error) {
	if err := ed.CheckCreate(d); err != nil {
		return idea.Idea{}, err
	}
	d.CreatedBy = ed.ContributorID
	i, err := idea.New(d, a.cfg.NewID(), a.now())
	if err != nil {
		return idea.Idea{}, err
	}
	err = a.tx(ctx, func(r Repos) error {
		return a.create(ctx, r, i, ed.Actor, ed.Handle)
	})
	if err != nil {
		return idea.Idea{}, IdeaError(err, i.ID)
	}
	return i, nil
}

// create stores a new idea with the first entries of its histories: its
// stage and its revision (what steers it), both "created" by actor.
func (a *App) create(ctx context.Context, r Repos, i idea.Idea, actor, handle string) error {
	if err := r.Ideas.Create(ctx, i); err != nil {
		return err
	}
	if err := r.Ideas.RecordStage(ctx, store.StageChange{ID: a.cfg.NewID(), IdeaID: i.ID, To: i.Stage, At: i.CreatedAt,
		Actor: actor, ActorHandle: handle, Reason: "created"}); err != nil {
		return err
	}
	return r.Ideas.RecordRevision(ctx, store.Revision{ID: a.cfg.NewID(), IdeaID: i.ID, Steering: i.Steering(), At: i.CreatedAt,
		Actor: actor, ActorHandle: handle, Reason: "created"})
}

// Idea returns an idea, archived or not. store.ErrNotFound when absent.
func (a *App) Idea(ctx context.Context, id string) (idea.Idea, error) {
	i, err := a.read().Ideas.Get(ctx, id)
	return i, IdeaError(err, id)
}

// UpdateIdea applies a patch (idea.Apply) to an idea, when ed may change
// it (idea.Editor.CheckEdit).
func (a *App) UpdateIdea(ctx context.Context, ed idea.Editor, id string, p idea.Patch) (idea.Idea, error) {
	now := a.now()
	return a.change(ctx, id, moved{by: ed.Actor, handle: ed.Handle, why: "update", at: now}, func(i *idea.Idea) error {
		if err := ed.CheckEdit(*i, p); err != nil {
			return err
		}
		return i.Apply(p, now)
	})
}

// SetTags replaces an idea's tags, when ed may change it.
func (a *App) SetTags(ctx context.Context, ed idea.Editor, id string, tags []string) (idea.Idea, error) {
	return a.UpdateIdea(ctx, ed, id, idea.Patch{Tags: &tags})
}

// change reads the idea under its lock, applies rule and writes the result,
// in one transaction: concurrent changes of one idea apply one after the
// other, each seeing the previous one's result. An error from rule aborts
// and is returned as is, and nothing is written. rule may run more than
// once (a retried transaction), so it must only modify the idea.
// store.ErrNotFound when absent; store.ErrArchived for an archived idea.
func (a *App) change(ctx context.Context, id string, m moved, rule func(*idea.Idea) error) (idea.Idea, error) {
	var out idea.Idea
	err := a.tx(ctx, func(r Repos) error {
		before, err := r.Ideas.Lock(ctx, id)
		if err != nil {
			return err
		}
		if before.Archived {
			return fmt.Errorf("idea %s: %w", id, store.ErrArchived)
		}
		after := before
		after.Tags = append([]string(nil), before.Tags...)
		if err := rule(&after); err != nil {
			return err
		}
		if err := r.Ideas.Update(ctx, before, after); err != nil {
			return err
		}
		if after.Stage != before.Stage {
			if err := r.Ideas.RecordStage(ctx, store.StageChange{ID: a.cfg.NewID(), IdeaID: id, From: before.Stage, To: after.Stage,
				At: m.at, Actor: m.by, ActorHandle: m.handle, Reason: m.why}); err != nil {
				return err
			}
		}
		if idea.Revised(before, after) {
			if err := r.Ideas.RecordRevision(ctx, store.Revision{ID: a.cfg.NewID(), IdeaID: id, Steering: after.Steering(),
				At: m.at, Actor: m.by, ActorHandle: m.handle, Reason: m.why}); err != nil {
				return err
			}
		}
		out = after
		return nil
	})
	return out, IdeaError(err, id)
}

// moved is who changes an idea, why and when, for its stage history when
// the change moves its stage.
type moved struct {
	by, why string
	// handle is by's handle when by is a contributor (idea.Editor.Handle).
	handle string
	at     time.Time
}
