package usecase

import (
	"context"
	"fmt"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// ApplyCmd applies one right-sizing suggestion: a split of IdeaID into
// children (Children, or those right-sizing proposes when none), or a merge
// of OverlapWithID into IdeaID. A dry run only projects the changes.
type ApplyCmd struct {
	SuggestionType string
	// Action, when given, must be the suggestion type's action.
	Action        string
	IdeaID        string
	OverlapWithID string
	Children      []rightsizing.Child
	DryRun        bool
}

// Change is one change applying a suggestion makes, or would make.
type Change struct {
	// Type is create_idea, link_parent, archive_idea or update_idea.
	Type      string
	IdeaID    string
	RelatedID string
	Detail    string
}

// validate checks the whole command, naming every bad field at once.
func (c ApplyCmd) validate() error {
	var errs []fault.FieldError
	want := map[string]string{rightsizing.Split: rightsizing.SplitIntoChild, rightsizing.Merge: rightsizing.MergeAndArchive}
	action, known := want[c.SuggestionType]
	switch {
	case !known:
		errs = append(errs, fault.Field("suggestion_type", "must be split or merge"))
	case c.Action != "" && c.Action != action:
		errs = append(errs, fault.Field("action", "a %s applies with %s", c.SuggestionType, action))
	}
	if c.IdeaID == "" {
		errs = append(errs, fault.Field("idea_id", "is required"))
	}
	if c.SuggestionType == rightsizing.Merge {
		switch c.OverlapWithID {
		case "":
			errs = append(errs, fault.Field("overlap_with_id", "is required for a merge"))
		case c.IdeaID:
			errs = append(errs, fault.Field("overlap_with_id", "must differ from idea_id"))
		}
	}
	for k, ch := range c.Children {
		if ch.Name == "" || len(ch.Name) > idea.MaxNameLen {
			errs = append(errs, fault.Field(fmt.Sprintf("proposed_children[%d].name", k), "must be 1 to %d bytes", idea.MaxNameLen))
		}
	}
	if len(errs) > 0 {
		return fault.Validation(errs...)
	}
	return nil
}

// ApplyRightSizing validates the command, reads the ideas it names (an
// archived one is a conflict) and returns the changes, making them unless
// it is a dry run.
func (a *App) ApplyRightSizing(ctx context.Context, c ApplyCmd) ([]Change, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	parent, err := a.activeIdea(ctx, c.IdeaID)
	if err != nil {
		return nil, err
	}
	if c.SuggestionType == rightsizing.Split {
		return a.applySplit(ctx, parent, c.Children, c.DryRun)
	}
	return a.applyMerge(ctx, parent, c.OverlapWithID, c.DryRun)
}

// activeIdea reads an idea that must exist and not be archived.
func (a *App) activeIdea(ctx context.Context, id string) (idea.Idea, error) {
	i, err := a.Idea(ctx, id)
	if err != nil {
		return idea.Idea{}, err
	}
	if i.Archived {
		return idea.Idea{}, IdeaError(store.ErrArchived, id)
	}
	return i, nil
}

// applySplit creates child ideas of parent: the proposed ones, or those
// right-sizing proposes (ProposeSplit).
func (a *App) applySplit(ctx context.Context, parent idea.Idea, proposed []rightsizing.Child, dryRun bool) ([]Change, error) {
	children, err := a.ProposeSplit(ctx, parent, proposed)
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, child := range children {
		changes = append(changes,
			Change{Type: "create_idea", IdeaID: child.ID, Detail: fmt.Sprintf("create %q", child.Name)},
			Change{Type: "link_parent", IdeaID: child.ID, RelatedID: parent.ID, Detail: fmt.Sprintf("%q is split from %q", child.Name, parent.Name)})
	}
	if dryRun {
		return changes, nil
	}
	if err := a.Split(ctx, parent.ID, children); err != nil {
		return nil, IdeaError(err, parent.ID)
	}
	return changes, nil
}

// applyMerge folds the duplicate into keep: keep gains its tags, the
// duplicate is archived (it leaves the list, the totals and right-sizing).
func (a *App) applyMerge(ctx context.Context, keep idea.Idea, foldID string, dryRun bool) ([]Change, error) {
	fold, err := a.activeIdea(ctx, foldID)
	if err != nil {
		return nil, err
	}
	changes := []Change{
		{Type: "archive_idea", IdeaID: fold.ID, RelatedID: keep.ID, Detail: fmt.Sprintf("archive %q, merged into %q", fold.Name, keep.Name)},
		{Type: "update_idea", IdeaID: keep.ID, RelatedID: fold.ID, Detail: fmt.Sprintf("%q gains the tags of %q", keep.Name, fold.Name)},
	}
	if dryRun {
		return changes, nil
	}
	if _, err := a.Merge(ctx, keep.ID, fold.ID); err != nil {
		return nil, IdeaError(err, keep.ID)
	}
	return changes, nil
}
